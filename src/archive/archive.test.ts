import { existsSync, promises as fs, readdirSync, rmSync, utimesSync } from 'node:fs';
import { join } from 'node:path';
import type { Redis } from 'ioredis';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { tempDir } from '../../test/support/env.ts';
import { startRedis, type TestRedis } from '../../test/support/redis.ts';
import { API_VERSION, type ExecutionRequest } from '../api/v1alpha1/index.ts';
import { closeRedis, connectRedis, whenRedisReady } from '../redis/connect.ts';
import { openFileArchive, type FileArchive } from './files.ts';
import { createRedisArchive } from './redis.ts';
import { ArchiveError, type ExecutionArchive } from './types.ts';

/** A finished request as the store holds it, every optional part filled so a lossy round trip would show. */
function finished(name: string, namespace = 'default'): ExecutionRequest {
  return {
    apiVersion: API_VERSION,
    kind: 'ExecutionRequest',
    metadata: {
      name,
      namespace,
      uid: 'c0ffee00-0000-4000-8000-000000000001',
      resourceVersion: '42',
      generation: 1,
      creationTimestamp: '2030-01-01T00:00:00Z',
      labels: { 'agentwallet.dev/api-client': 'client-1', 'agentwallet.dev/phase': 'Confirmed' },
      annotations: { 'agentwallet.dev/accepted': '01hzzzzzzzzzzzzzzzzzzzzzzz' },
    },
    spec: {
      apiClient: 'client-1',
      agentId: 'agent-1',
      chain: 'base',
      calls: [{ target: `0x${'11'.repeat(20)}`, value: '0', data: '0xd09de08a' }],
      batch: true,
      strategyId: 's-1',
      paymentMode: 'sponsored',
    },
    status: {
      phase: 'Confirmed',
      observedGeneration: 1,
      conditions: [{ type: 'Succeeded', status: 'True', reason: 'Confirmed', message: '', lastTransitionTime: '2030-01-01T00:00:07Z' }],
      smartWalletAddress: `0x${'ab'.repeat(20)}`,
      txHash: `0x${'cd'.repeat(32)}`,
      blockNumber: '42',
      gasUsed: '120000',
      costUsd: 0,
      completionTime: '2030-01-01T00:00:07Z',
    },
  };
}

/** The contract every backend keeps. */
function archiveContract(open: () => Promise<ExecutionArchive>) {
  let archive: ExecutionArchive;
  beforeAll(async () => {
    archive = await open();
  });
  afterAll(() => archive.close());

  it('returns what was put, whole', async () => {
    const req = finished('req-roundtrip');
    await archive.put(req);
    expect(await archive.get('req-roundtrip')).toEqual(req);
    expect(await archive.get('req-roundtrip', 'default')).toEqual(req);
  });

  it('answers undefined for unknown names and names that cannot exist', async () => {
    expect(await archive.get('req-never-archived')).toBeUndefined();
    for (const name of ['../../etc/passwd', 'UPPER', 'a/b', '', 'x'.repeat(254)]) expect(await archive.get(name)).toBeUndefined();
    expect(await archive.get('req-roundtrip', '../default')).toBeUndefined();
  });

  it("keeps each chain's inclusion mark, per namespace, apart from the requests", async () => {
    const mark = { chain: 'base' as const, request: 'req-mark', completionTime: '2030-01-01T00:00:07Z', txHash: `0x${'cd'.repeat(32)}`, blockNumber: '42' };
    expect(await archive.inclusionMark('base')).toBeUndefined();
    await archive.putInclusionMark(mark);
    await archive.putInclusionMark({ ...mark, chain: 'ethereum', blockNumber: '7' }, 'team-a');
    expect(await archive.inclusionMark('base')).toEqual(mark);
    expect(await archive.inclusionMark('ethereum')).toBeUndefined();
    expect(await archive.inclusionMark('ethereum', 'team-a')).toMatchObject({ blockNumber: '7' });
    await archive.putInclusionMark({ ...mark, request: 'req-newer', blockNumber: '3', blockHash: `0x${'ef'.repeat(32)}` });
    expect(await archive.inclusionMark('base')).toMatchObject({ request: 'req-newer', blockNumber: '3', blockHash: `0x${'ef'.repeat(32)}` });
  });

  it('keeps namespaces apart', async () => {
    await archive.put(finished('req-ns', 'team-a'));
    expect((await archive.get('req-ns', 'team-a'))?.metadata.namespace).toBe('team-a');
    expect(await archive.get('req-ns', 'team-b')).toBeUndefined();
    expect(await archive.get('req-ns')).toBeUndefined();
  });

  it('a second put replaces the first', async () => {
    await archive.put(finished('req-twice'));
    const newer = finished('req-twice');
    newer.metadata.resourceVersion = '43';
    newer.metadata.annotations = { note: 'updated' };
    await archive.put(newer);
    expect(await archive.get('req-twice')).toEqual(newer);
  });

  it('takes the longest valid names (253 characters)', async () => {
    const name = `req-${'a'.repeat(249)}`;
    await archive.put(finished(name));
    expect((await archive.get(name))?.metadata.name).toBe(name);
    expect(await archive.get(`req-${'a'.repeat(248)}`)).toBeUndefined();
  });

  it('refuses to archive an object with an invalid name', async () => {
    const bad = finished('req-ok');
    bad.metadata.name = '../escape';
    await expect(archive.put(bad)).rejects.toMatchObject({ name: 'ArchiveError', code: 'Invalid' });
  });
}

describe('file archive (embedded mode)', () => {
  const dir = tempDir('aw-archive-');
  afterAll(() => rmSync(dir, { recursive: true, force: true }));

  archiveContract(() => openFileArchive({ dir: join(dir, 'contract') }));

  it('survives a restart, at the documented path, leaving no temp files', async () => {
    const root = join(dir, 'restart');
    const first = await openFileArchive({ dir: root });
    const req = finished('req-restart');
    await first.put(req);
    await first.close();
    const files = readdirSync(join(root, 'default'), { recursive: true }) as string[];
    expect(files.filter((f) => f.endsWith('.json'))).toEqual([expect.stringMatching(/^[0-9a-f]{2}\/req-restart\.json$/)]);
    expect(files.filter((f) => f.endsWith('.tmp'))).toEqual([]);
    const again = await openFileArchive({ dir: root });
    expect(await again.get('req-restart')).toEqual(req);
    await again.close();
  });

  it('stops answering after the retention, and sweep() removes expired entries and stale temp files', async () => {
    const root = join(dir, 'retention');
    const archive = await openFileArchive({ dir: root, retentionMs: 60_000, sweepIntervalMs: 0 });
    await archive.put(finished('req-old'));
    await archive.put(finished('req-new'));
    const files = (readdirSync(root, { recursive: true }) as string[]).map((f) => join(root, f));
    const old = files.find((f) => f.endsWith('req-old.json'))!;
    const twoMinutesAgo = new Date(Date.now() - 120_000);
    utimesSync(old, twoMinutesAgo, twoMinutesAgo);
    const crashedTemp = join(old, '..', '.deadbeef.tmp');
    await fs.writeFile(crashedTemp, '{"half":');
    const twoHoursAgo = new Date(Date.now() - 2 * 3_600_000);
    utimesSync(crashedTemp, twoHoursAgo, twoHoursAgo);

    expect(await archive.get('req-old')).toBeUndefined();
    expect(await archive.get('req-new')).toBeDefined();
    expect(await archive.sweep()).toEqual({ removed: 2 });
    expect(existsSync(old)).toBe(false);
    expect(existsSync(crashedTemp)).toBe(false);
    expect(await archive.get('req-new')).toBeDefined();
    await archive.close();
  });

  it('a damaged entry is an error (Corrupt), not a 404', async () => {
    const root = join(dir, 'corrupt');
    const archive: FileArchive = await openFileArchive({ dir: root });
    await archive.put(finished('req-damaged'));
    const file = (readdirSync(root, { recursive: true }) as string[]).find((f) => f.endsWith('req-damaged.json'))!;
    await fs.writeFile(join(root, file), '{"apiVersion":"agentwallet.dev/v1alpha1","kind":"ExecutionRequest"}');
    await expect(archive.get('req-damaged')).rejects.toSatisfy((e) => e instanceof ArchiveError && e.code === 'Corrupt');
    await archive.close();
  });
});

describe('redis archive (cluster)', () => {
  let server: TestRedis;
  let redis: Redis;
  const leftDirs: string[] = [];
  beforeAll(async () => {
    server = await startRedis({ appendonly: true });
    redis = connectRedis(server.url, { name: 'archive-test' });
    await whenRedisReady(redis);
  });
  afterAll(async () => {
    await closeRedis(redis);
    await server.stop();
    for (const d of leftDirs) rmSync(d, { recursive: true, force: true });
  });

  archiveContract(async () => createRedisArchive(redis));

  it('one key per request, expiring after the retention', async () => {
    const archive = createRedisArchive(redis, { retentionMs: 150 });
    await archive.put(finished('req-short'));
    const pttl = await redis.pttl('aw:archive:default:req-short');
    expect(pttl).toBeGreaterThan(0);
    expect(pttl).toBeLessThanOrEqual(150);
    expect(await archive.get('req-short')).toBeDefined();
    await new Promise((r) => setTimeout(r, 200));
    expect(await archive.get('req-short')).toBeUndefined();
  });

  it('the default retention is 30 days', async () => {
    await createRedisArchive(redis).put(finished('req-default-ttl'));
    const days = (await redis.pttl('aw:archive:default:req-default-ttl')) / 86_400_000;
    expect(days).toBeGreaterThan(29.99);
    expect(days).toBeLessThanOrEqual(30);
  });

  it('with AOF (appendfsync everysec), archived requests survive a crash of Redis', async () => {
    const req = finished('req-aof');
    await createRedisArchive(redis).put(req);
    await new Promise((r) => setTimeout(r, 1_500)); // everysec: on disk within a second
    const { port, dir } = server;
    const closed = new Promise((r) => redis.once('close', r));
    server.kill();
    await closed;
    leftDirs.push(dir); // restarted on it: stop() leaves a directory it did not create
    server = await startRedis({ port, dir, appendonly: true });
    await whenRedisReady(redis);
    expect(await createRedisArchive(redis).get('req-aof')).toEqual(req);
  });

  it('fails with ArchiveError Unavailable while Redis is down (the gateway answers 503)', async () => {
    const archive = createRedisArchive(redis);
    const closed = new Promise((r) => redis.once('close', r));
    await server.stop();
    await closed;
    await expect(archive.get('req-aof')).rejects.toMatchObject({ name: 'ArchiveError', code: 'Unavailable' });
    await expect(archive.put(finished('req-down'))).rejects.toMatchObject({ name: 'ArchiveError', code: 'Unavailable' });
  });
});
