import { mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { describeResourceStoreConformance } from '../conformance.ts';
import { openEmbeddedStore } from './index.ts';

// A short history, so that the suite's 20 writes push its first versions out and a watch from them is Gone.
const HISTORY = 16;

describeResourceStoreConformance('embedded', async () => {
  const dir = await mkdtemp(join(tmpdir(), 'aw-conformance-'));
  const store = await openEmbeddedStore({ dir, fsync: false, historyLimit: HISTORY });
  return {
    store,
    namespace: 'default',
    otherNamespace: 'other',
    tooOldResourceVersion: async () => '1',
    cleanup: () => rm(dir, { recursive: true, force: true }),
  };
});
