import { afterEach, describe, expect, it } from 'vitest';
import { tempDir } from '../../test/support/env.ts';
import { createKey } from '../keys/manage.ts';
import { openEmbeddedStore, type EmbeddedStore } from '../store/embedded/index.ts';
import { faultyFiles } from '../store/embedded/testing/faultyFiles.ts';
import { openTestGateway, type TestGateway } from './testing/harness.ts';

describe('GET /health and the state store', () => {
  let gw: TestGateway | undefined;
  let store: EmbeddedStore | undefined;
  afterEach(async () => {
    await gw?.close();
    await store?.close();
  });

  it('answers 503 with the reason while the store cannot write, and 200 again once it can', async () => {
    const files = faultyFiles();
    store = await openEmbeddedStore({ dir: tempDir(), files, onFatal: () => undefined });
    gw = await openTestGateway({ store });
    const healthy = await gw.app.inject({ url: '/health' });
    expect(healthy.statusCode).toBe(200);
    expect(healthy.json().store).toEqual({ synced: true, writable: true });

    files.space = 0; // the disk is full
    await expect(createKey(store, { mode: 'sponsored' })).rejects.toMatchObject({ code: 'Unavailable' });
    const full = await gw.app.inject({ url: '/health' });
    expect(full.statusCode).toBe(503);
    expect(full.json()).toMatchObject({ status: 'degraded', store: { writable: false, reason: expect.stringMatching(/ENOSPC/), since: expect.any(String) } });

    files.space = undefined; // space freed: the next write recovers the store
    await createKey(store, { mode: 'sponsored' });
    const recovered = await gw.app.inject({ url: '/health' });
    expect(recovered.statusCode).toBe(200);
    expect(recovered.json().store.writable).toBe(true);
  });
});
