import { rmSync } from 'node:fs';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { tempDir } from '../../test/support/env.ts';
import { startRedis } from '../../test/support/redis.ts';
import { openFileArchive, type FileArchive } from '../archive/files.ts';
import { createRedisArchive } from '../archive/redis.ts';
import { startRetentionController } from '../controller/retention/index.ts';
import { closeRedis, connectRedis, whenRedisReady } from '../redis/connect.ts';
import { isStoreError } from '../store/types.ts';
import { executionRequest, openTestGateway, writeStatus, type TestGateway } from './testing/harness.ts';

describe('GET /status/:id after the request was archived and deleted', () => {
  const dir = tempDir('aw-status-archive-');
  let archive: FileArchive;
  let gw: TestGateway;
  let alice: { apiKey: string; clientId: string };
  let bob: { apiKey: string; clientId: string };
  beforeAll(async () => {
    archive = await openFileArchive({ dir: join(dir, 'archive'), fsync: false });
    gw = await openTestGateway({ archive });
    alice = await gw.newKey();
    bob = await gw.newKey();
  });
  afterAll(async () => {
    await gw.close();
    await archive.close();
    rmSync(dir, { recursive: true, force: true });
  });

  const status = (key: string, id: string) => gw.app.inject({ url: `/status/${id}`, headers: { 'x-api-key': key } });

  it('answers exactly as before the deletion, to the owner only', async () => {
    await gw.store.create(executionRequest('req-archived', alice.clientId, { strategyId: 's-9' }));
    await writeStatus(gw.store, 'req-archived', () => ({
      phase: 'Confirmed',
      smartWalletAddress: `0x${'ab'.repeat(20)}`,
      txHash: `0x${'cd'.repeat(32)}`,
      blockNumber: '42',
      gasUsed: '120000',
      costUsd: 0,
      completionTime: new Date(Date.now() - 60_000).toISOString(),
    }));
    const before = await status(alice.apiKey, 'req-archived');
    expect(before.statusCode).toBe(200);

    const retention = await startRetentionController({ store: gw.store, archive, retentionSeconds: 1 });
    const deadline = Date.now() + 5_000;
    while (await gw.store.get('ExecutionRequest', 'req-archived').then(() => true, (e) => !isStoreError(e, 'NotFound'))) {
      if (Date.now() > deadline) throw new Error('the retention controller did not delete the request');
      await new Promise((r) => setTimeout(r, 20));
    }
    await retention.stop();

    const after = await status(alice.apiKey, 'req-archived');
    expect(after.statusCode).toBe(200);
    expect(after.json()).toEqual(before.json());

    // The tenant check holds for archived requests: another key's id is an unknown id.
    const other = await status(bob.apiKey, 'req-archived');
    const unknown = await status(bob.apiKey, 'req-never-existed');
    expect(other.statusCode).toBe(404);
    expect(other.json()).toEqual(unknown.json());
  });
});

describe('GET /status/:id when the archive is unreachable', () => {
  it('answers 503 store_unavailable (retry), not 404 or a bare 500', async () => {
    const redisServer = await startRedis();
    const redis = connectRedis(redisServer.url, { name: 'status-archive-test' });
    await whenRedisReady(redis);
    const gw = await openTestGateway({ archive: createRedisArchive(redis) });
    try {
      const { apiKey } = await gw.newKey();
      const closed = new Promise((r) => redis.once('close', r));
      await redisServer.stop();
      await closed;
      const res = await gw.app.inject({ url: '/status/req-somewhere', headers: { 'x-api-key': apiKey } });
      expect(res.statusCode).toBe(503);
      expect(res.json()).toMatchObject({ error: 'store_unavailable' });
      expect(res.headers['retry-after']).toBe('1');
    } finally {
      await gw.close();
      await closeRedis(redis);
    }
  });
});
