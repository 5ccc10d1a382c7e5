import { describe, expect, it } from 'vitest';
import { createInMemoryRateLimiter } from './memory.ts';

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
