import { mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { openEmbeddedStore, type EmbeddedStore } from '../store/embedded/index.ts';
import { executionRequest } from '../store/embedded/testing/fixtures.ts';
import { StoreError } from '../store/types.ts';
import { retryOnConflict } from './retry.ts';

let dir: string;
let store: EmbeddedStore;
beforeEach(async () => {
  dir = await mkdtemp(join(tmpdir(), 'aw-retry-'));
  store = await openEmbeddedStore({ dir });
});
afterEach(async () => {
  await store.close();
  await rm(dir, { recursive: true, force: true });
});

describe('retryOnConflict', () => {
  it('lets concurrent read-modify-writes all land', async () => {
    await store.create(executionRequest('e'));
    const bump = () =>
      retryOnConflict(
        async () => {
          const cur = await store.get('ExecutionRequest', 'e');
          return store.updateStatus({ ...cur, status: { submitAttempts: (cur.status?.submitAttempts ?? 0) + 1 } });
        },
        { attempts: 20, delayMs: 1 },
      );
    await Promise.all(Array.from({ length: 8 }, bump));
    expect((await store.get('ExecutionRequest', 'e')).status?.submitAttempts).toBe(8);
  });

  it('gives up after the given attempts with the Conflict', async () => {
    const e0 = await store.create(executionRequest('e'));
    await store.updateStatus({ ...e0, status: { phase: 'Pending' } });
    let calls = 0;
    const stale = () => {
      calls++;
      return store.updateStatus({ ...e0, status: { phase: 'Queued' } }); // always the old version
    };
    await expect(retryOnConflict(stale, { attempts: 3, delayMs: 1 })).rejects.toMatchObject({ code: 'Conflict' });
    expect(calls).toBe(3);
  });

  it('does not retry other errors', async () => {
    let calls = 0;
    await expect(
      retryOnConflict(async () => {
        calls++;
        throw new StoreError('NotFound', 'gone');
      }),
    ).rejects.toMatchObject({ code: 'NotFound' });
    expect(calls).toBe(1);
  });
});
