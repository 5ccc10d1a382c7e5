import type { Redis } from 'ioredis';
import type { Logger } from '../lib/logger.ts';
import { redisScript } from '../redis/script.ts';
import { createInMemoryRateLimiter } from './memory.ts';
import type { RateDecision, RateLimit, RateLimiter } from './types.ts';

/**
 * One token bucket per key, in a hash `{ tokens, ts, rate }`, updated by one script so concurrent
 * gateways never lose a take. Time is Redis's (TIME), so the replicas' clocks do not matter. Refill uses the
 * rate the bucket was last written with (a changed limit applies from now on, as in memory); the key
 * expires when the bucket would be full again, since a full bucket is the same as none.
 *
 * Returns { allowed (0/1), remaining (whole tokens), retryAfterMs }.
 */
const CONSUME = redisScript(`
local t = redis.call('TIME')
local now = tonumber(t[1]) * 1000 + tonumber(t[2]) / 1000
local rate = tonumber(ARGV[1])
local burst = tonumber(ARGV[2])
local b = redis.call('HMGET', KEYS[1], 'tokens', 'ts', 'rate')
local tokens = tonumber(b[1])
if tokens == nil then
  tokens = burst
else
  local elapsed = math.max(0, now - tonumber(b[2]))
  tokens = math.min(burst, tokens + elapsed / 1000 * (tonumber(b[3]) or rate))
end
local allowed = 0
local retry = 0
if tokens >= 1 then
  tokens = tokens - 1
  allowed = 1
else
  retry = math.ceil((1 - tokens) / rate * 1000)
end
redis.call('HSET', KEYS[1], 'tokens', tostring(tokens), 'ts', tostring(now), 'rate', tostring(rate))
redis.call('PEXPIRE', KEYS[1], math.max(1, math.ceil((burst - tokens) / rate * 1000)))
return { allowed, math.floor(tokens), retry }
`);

export interface RedisRateLimiterOptions {
  /** Prefix of the bucket keys (default `aw:rl:`). */
  keyPrefix?: string;
  /**
   * While Redis is unreachable, requests are limited by this process alone (default: an in-memory token
   * bucket), so each replica enforces the limit by itself: at most replicas × the limit gets through, and
   * the API stays up. `false` fails the request instead (the gateway answers 500).
   */
  fallback?: RateLimiter | false;
  logger?: Logger;
}

/**
 * The gateway's {@link RateLimiter} shared by every gateway replica: a key's burst and rate hold for the
 * deployment, not per pod.
 *
 * @example
 * const redis = connectRedis(config.redis.url, { ...redisPasswordFromEnv(), name: 'gateway' });
 * const app = await buildGateway({ ...deps, rateLimiter: createRedisRateLimiter(redis, { logger }) });
 */
export function createRedisRateLimiter(redis: Redis, opts: RedisRateLimiterOptions = {}): RateLimiter {
  const prefix = opts.keyPrefix ?? 'aw:rl:';
  const fallback = opts.fallback === undefined ? createInMemoryRateLimiter() : opts.fallback;
  let degraded = false;

  const degrade = (key: string, limit: RateLimit, fb: RateLimiter, err?: unknown): Promise<RateDecision> => {
    if (!degraded) opts.logger?.warn({ err, redis: redis.status }, 'rate limits: Redis unreachable; limiting per replica until it is back');
    degraded = true;
    return fb.consume(key, limit);
  };

  return {
    async consume(key: string, limit: RateLimit): Promise<RateDecision> {
      if (!(limit.requestsPerSecond > 0) || !(limit.burst >= 1)) {
        throw new RangeError(`rate limit needs requestsPerSecond > 0 and burst >= 1, got ${JSON.stringify(limit)}`);
      }
      // Known down: answer locally at once rather than queueing every request behind the reconnect.
      if (fallback && redis.status !== 'ready') return degrade(key, limit, fallback);
      let reply: [number, number, number];
      try {
        reply = (await CONSUME.run(redis, [prefix + key], [limit.requestsPerSecond, limit.burst])) as [number, number, number];
      } catch (err) {
        if (!fallback) throw err;
        return degrade(key, limit, fallback, err);
      }
      if (degraded) opts.logger?.info({}, 'rate limits: Redis answers again; limits are shared again');
      degraded = false;
      const [allowed, remaining, retryAfterMs] = reply;
      return allowed === 1 ? { allowed: true, remaining } : { allowed: false, retryAfterMs };
    },
  };
}
