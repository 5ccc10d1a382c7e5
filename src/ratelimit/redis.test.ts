import { rmSync } from 'node:fs';
import type { Redis } from 'ioredis';
import { afterAll, afterEach, beforeAll, describe, expect, it } from 'vitest';
import { tempDir } from '../../test/support/env.ts';
import { startRedis, type TestRedis } from '../../test/support/redis.ts';
import { buildGateway } from '../gateway/app.ts';
import { createKey } from '../keys/manage.ts';
import { closeRedis, connectRedis, whenRedisReady } from '../redis/connect.ts';
import { openEmbeddedStore } from '../store/embedded/index.ts';
import { createRedisRateLimiter } from './redis.ts';

const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms));

describe('createRedisRateLimiter (real redis-server)', () => {
  let server: TestRedis;
  const clients: Redis[] = [];
  /** A connected client: until it is, the limiter answers per replica (see the last test). */
  const connect = async () => {
    const redis = connectRedis(server.url, { name: 'ratelimit-test' });
    clients.push(redis);
    await whenRedisReady(redis);
    return redis;
  };
  /** A limiter as one gateway replica has it: its own connection; no fallback, so every answer is Redis's. */
  const replica = async (opts: Parameters<typeof createRedisRateLimiter>[1] = {}) =>
    createRedisRateLimiter(await connect(), { fallback: false, ...opts });
  let n = 0;
  /** A key no other test has used. */
  const fresh = () => `k${++n}-${Date.now()}`;

  beforeAll(async () => {
    server = await startRedis();
  });
  afterEach(async () => {
    for (const c of clients.splice(0)) await closeRedis(c);
  });
  afterAll(() => server.stop());

  it('allows a burst, then says how long to wait for the next token; remaining counts down', async () => {
    const limiter = await replica();
    const key = fresh();
    const limit = { requestsPerSecond: 2, burst: 3 };
    expect(await limiter.consume(key, limit)).toEqual({ allowed: true, remaining: 2 });
    expect(await limiter.consume(key, limit)).toEqual({ allowed: true, remaining: 1 });
    expect(await limiter.consume(key, limit)).toEqual({ allowed: true, remaining: 0 });
    const denied = await limiter.consume(key, limit);
    expect(denied.allowed).toBe(false);
    const retryAfterMs = (denied as { retryAfterMs: number }).retryAfterMs;
    expect(retryAfterMs).toBeGreaterThan(400); // 500 ms for one token at 2/s, less what refilled meanwhile
    expect(retryAfterMs).toBeLessThanOrEqual(500);
    // Buckets are per key.
    expect((await limiter.consume(fresh(), limit)).allowed).toBe(true);
    // After the advertised wait, exactly one more.
    await sleep(retryAfterMs + 10);
    expect((await limiter.consume(key, limit)).allowed).toBe(true);
    expect((await limiter.consume(key, limit)).allowed).toBe(false);
  });

  it('two replicas take from one bucket', async () => {
    const a = await replica();
    const b = await replica();
    const key = fresh();
    const limit = { requestsPerSecond: 0.5, burst: 3 };
    expect((await a.consume(key, limit)).allowed).toBe(true);
    expect((await b.consume(key, limit)).allowed).toBe(true);
    expect((await a.consume(key, limit)).allowed).toBe(true);
    const fromB = await b.consume(key, limit);
    const fromA = await a.consume(key, limit);
    expect(fromB.allowed).toBe(false);
    expect(fromA.allowed).toBe(false);
    expect((fromA as { retryAfterMs: number }).retryAfterMs).toBeGreaterThan(1_900);
  });

  it('concurrent takes from many replicas never exceed the burst', async () => {
    const replicas = await Promise.all(Array.from({ length: 4 }, () => replica()));
    const key = fresh();
    const limit = { requestsPerSecond: 0.1, burst: 10 };
    const decisions = await Promise.all(Array.from({ length: 40 }, (_, i) => replicas[i % 4]!.consume(key, limit)));
    expect(decisions.filter((d) => d.allowed)).toHaveLength(10);
  });

  it('refill never exceeds the burst', async () => {
    const limiter = await replica();
    const key = fresh();
    const limit = { requestsPerSecond: 100, burst: 2 };
    await limiter.consume(key, limit);
    await limiter.consume(key, limit);
    await sleep(100); // 10 tokens' worth of time
    expect((await limiter.consume(key, limit)).allowed).toBe(true);
    expect((await limiter.consume(key, limit)).allowed).toBe(true);
    expect((await limiter.consume(key, limit)).allowed).toBe(false);
  });

  it("a lowered burst applies at once to a key's bucket", async () => {
    const limiter = await replica();
    const key = fresh();
    expect(await limiter.consume(key, { requestsPerSecond: 0.1, burst: 10 })).toEqual({ allowed: true, remaining: 9 });
    expect(await limiter.consume(key, { requestsPerSecond: 0.1, burst: 2 })).toEqual({ allowed: true, remaining: 1 });
  });

  it('a bucket key expires once it would be full again (a full bucket is no bucket)', async () => {
    const redis = await connect();
    const limiter = createRedisRateLimiter(redis, { keyPrefix: 'test:rl:', fallback: false });
    const key = fresh();
    await limiter.consume(key, { requestsPerSecond: 20, burst: 2 }); // 1 token short: full in 50 ms
    const pttl = await redis.pttl(`test:rl:${key}`);
    expect(pttl).toBeGreaterThan(0);
    expect(pttl).toBeLessThanOrEqual(50);
    await sleep(80);
    expect(await redis.exists(`test:rl:${key}`)).toBe(0);
  });

  it('gateways on two replicas share a key’s limit: the third request overall is 429', async () => {
    const dir = tempDir('aw-rl-gw-');
    const store = await openEmbeddedStore({ dir, fsync: false });
    const apps = await Promise.all(
      (await Promise.all([replica(), replica()])).map((rateLimiter) => buildGateway({ store, workers: new Map(), publicRateLimit: false, rateLimiter })),
    );
    try {
      const { api_key } = await createKey(store, { mode: 'sponsored', requestsPerSecond: 0.5, burst: 2 });
      const get = (i: number) => apps[i % 2]!.inject({ url: '/status/req-x', headers: { 'x-api-key': api_key } });
      expect((await get(0)).statusCode).toBe(404);
      expect((await get(1)).statusCode).toBe(404);
      const limited = await get(0);
      expect(limited.statusCode).toBe(429);
      expect(limited.headers['retry-after']).toBe('2');
      expect((await get(1)).statusCode).toBe(429);
    } finally {
      for (const app of apps) await app.close();
      await store.close();
      rmSync(dir, { recursive: true, force: true });
    }
  });

  it('with Redis down, limits per replica (default) or fails (fallback: false); shared again once it is back', async () => {
    const port = server.port;
    const redis = await connect();
    const degraded = createRedisRateLimiter(redis);
    const strict = createRedisRateLimiter(redis, { fallback: false });
    const key = fresh();
    const limit = { requestsPerSecond: 0.1, burst: 2 };
    const closed = new Promise((r) => redis.once('close', r));
    await server.stop();
    await closed;
    // Answered locally while Redis is down (it comes back only below): a call queued behind the reconnect
    // would never resolve here.
    expect((await degraded.consume(key, limit)).allowed).toBe(true);
    expect((await degraded.consume(key, limit)).allowed).toBe(true);
    expect((await degraded.consume(key, limit)).allowed).toBe(false);
    await expect(strict.consume(key, limit)).rejects.toThrow();

    server = await startRedis({ port });
    await whenRedisReady(redis);
    // Shared again: the answer is Redis's (a fresh server, so a full bucket), and the bucket is there.
    expect(await degraded.consume(key, limit)).toEqual({ allowed: true, remaining: 1 });
    expect(await redis.exists(`aw:rl:${key}`)).toBe(1);
  });
});
