import type { RateLimit, RateLimiter } from './types.ts';

/** One process's token buckets, in memory. */
interface Bucket {
  tokens: number;
  updatedAt: number;
  limit: RateLimit;
}

export interface InMemoryRateLimiterOptions {
  /** Milliseconds clock; injectable so tests can move time. */
  now?: () => number;
  /** Above this many buckets, full ones are dropped (a full bucket is the same as no bucket). */
  maxBuckets?: number;
}

export function createInMemoryRateLimiter(opts: InMemoryRateLimiterOptions = {}): RateLimiter {
  const now = opts.now ?? (() => performance.now());
  const maxBuckets = opts.maxBuckets ?? 10_000;
  const buckets = new Map<string, Bucket>();

  const refill = (b: Bucket, t: number): void => {
    b.tokens = Math.min(b.limit.burst, b.tokens + ((t - b.updatedAt) / 1000) * b.limit.requestsPerSecond);
    b.updatedAt = t;
  };

  const prune = (t: number): void => {
    for (const [key, b] of buckets) {
      refill(b, t);
      if (b.tokens >= b.limit.burst) buckets.delete(key);
    }
  };

  return {
    async consume(key, limit) {
      const t = now();
      let b = buckets.get(key);
      if (!b) {
        if (buckets.size >= maxBuckets) prune(t);
        b = { tokens: limit.burst, updatedAt: t, limit };
        buckets.set(key, b);
      } else {
        // A key's limits can change (the operator edits its ApiClient): the new ones apply from now on.
        refill(b, t);
        b.limit = limit;
        b.tokens = Math.min(b.tokens, limit.burst);
      }
      if (b.tokens >= 1) {
        b.tokens -= 1;
        return { allowed: true, remaining: Math.floor(b.tokens) };
      }
      return { allowed: false, retryAfterMs: Math.ceil(((1 - b.tokens) / limit.requestsPerSecond) * 1000) };
    },
  };
}
