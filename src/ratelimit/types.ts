/**
 * Token-bucket rate limiting, per API key and per client address on public endpoints (the gateway's hooks in
 * src/gateway/rateLimitHook.ts). The interface is async so a shared backend can implement it: Redis for several
 * gateway replicas (redis.ts); in memory for one process (memory.ts).
 */
export interface RateLimit {
  /** Sustained rate: tokens added per second. */
  requestsPerSecond: number;
  /** Bucket size: how many requests may arrive at once after a quiet period. */
  burst: number;
}

export type RateDecision = { allowed: true; remaining: number } | { allowed: false; retryAfterMs: number };

export interface RateLimiter {
  /** Takes one token from `key`'s bucket (created full on first use). */
  consume(key: string, limit: RateLimit): Promise<RateDecision>;
}
