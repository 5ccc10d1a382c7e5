import { afterEach, describe, expect, it } from 'vitest';
import { createInMemoryRateLimiter } from './rateLimit.ts';
import { openTestGateway, type TestGateway } from './testing/harness.ts';

describe('in-memory token bucket', () => {
  it('allows a burst, then one request per 1/rate seconds, and says how long to wait', async () => {
    let t = 0;
    const limiter = createInMemoryRateLimiter({ now: () => t });
    const limit = { requestsPerSecond: 2, burst: 3 };
    for (let i = 0; i < 3; i++) expect((await limiter.consume('k', limit)).allowed).toBe(true);
    expect(await limiter.consume('k', limit)).toEqual({ allowed: false, retryAfterMs: 500 });
    t = 250;
    expect(await limiter.consume('k', limit)).toEqual({ allowed: false, retryAfterMs: 250 });
    t = 500;
    expect((await limiter.consume('k', limit)).allowed).toBe(true);
    expect((await limiter.consume('k', limit)).allowed).toBe(false);
    // Buckets are per key.
    expect((await limiter.consume('other', limit)).allowed).toBe(true);
    // Refill never exceeds the burst.
    t = 60_000;
    for (let i = 0; i < 3; i++) expect((await limiter.consume('k', limit)).allowed).toBe(true);
    expect((await limiter.consume('k', limit)).allowed).toBe(false);
  });

  it('drops full buckets when it holds too many, without forgetting empty ones', async () => {
    let t = 0;
    const limiter = createInMemoryRateLimiter({ now: () => t, maxBuckets: 2 });
    const limit = { requestsPerSecond: 1, burst: 1 };
    await limiter.consume('a', limit);
    t = 5_000; // a is full again
    await limiter.consume('b', limit); // b is empty
    await limiter.consume('c', limit); // over the cap: a is pruned, b must survive
    expect((await limiter.consume('b', limit)).allowed).toBe(false);
  });
});

describe('gateway rate limiting', () => {
  let gw: TestGateway;
  afterEach(() => gw.close());

  it('429 rate_limited with Retry-After once a key has spent its burst; other keys are unaffected', async () => {
    gw = await openTestGateway();
    const slow = await gw.newKey({ requestsPerSecond: 0.5, burst: 2 });
    const other = await gw.newKey();
    const get = (key: string) => gw.app.inject({ url: '/status/req-x', headers: { 'x-api-key': key } });
    expect((await get(slow.apiKey)).statusCode).toBe(404);
    expect((await get(slow.apiKey)).statusCode).toBe(404);
    const limited = await get(slow.apiKey);
    expect(limited.statusCode).toBe(429);
    expect(limited.headers['retry-after']).toBe('2');
    expect(limited.json()).toEqual({ error: 'rate_limited', message: expect.stringContaining('API key'), retry_after_seconds: 2 });
    expect((await get(other.apiKey)).statusCode).toBe(404);
  });

  it('public endpoints are limited per client address when configured', async () => {
    gw = await openTestGateway({ publicRateLimit: { requestsPerSecond: 1, burst: 1 } });
    expect((await gw.app.inject({ url: '/health' })).statusCode).toBe(200);
    const limited = await gw.app.inject({ url: '/feed/recent' });
    expect(limited.statusCode).toBe(429);
    expect(limited.headers['retry-after']).toBe('1');
    const fromElsewhere = await gw.app.inject({ url: '/health', remoteAddress: '10.0.0.2' });
    expect(fromElsewhere.statusCode).toBe(200);
  });
});
