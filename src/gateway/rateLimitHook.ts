import type { FastifyReply, FastifyRequest } from 'fastify';
import { clientOf } from './auth.ts';
import { GatewayError } from './errors.ts';
import type { RateLimit, RateLimiter } from '../ratelimit/index.ts';

/** An onRequest hook taking one token per request from the bucket `keyOf` names; 429 with Retry-After when empty. */
function limitHook(
  limiter: RateLimiter,
  bucketOf: (request: FastifyRequest) => { key: string; limit: RateLimit; who: string },
) {
  return async function rateLimit(request: FastifyRequest, _reply: FastifyReply): Promise<void> {
    const { key, limit, who } = bucketOf(request);
    const decision = await limiter.consume(key, limit);
    if (decision.allowed) return;
    const seconds = Math.max(1, Math.ceil(decision.retryAfterMs / 1000));
    throw new GatewayError(429, 'rate_limited', `too many requests for this ${who}; retry after ${seconds} s`, {
      details: { retry_after_seconds: seconds },
      headers: { 'retry-after': String(seconds) },
    });
  };
}

/** Per API key, with the limits of the key's ApiClient. Must run after authentication. */
export function perKeyRateLimit(limiter: RateLimiter) {
  return limitHook(limiter, (request) => {
    const client = clientOf(request);
    const { requestsPerSecond, burst } = client.spec.limits;
    return { key: `key:${client.metadata.name}`, limit: { requestsPerSecond, burst }, who: 'API key' };
  });
}

/** Per client address, for the public endpoints. */
export function perAddressRateLimit(limiter: RateLimiter, limit: RateLimit) {
  return limitHook(limiter, (request) => ({ key: `ip:${request.ip}`, limit, who: 'client address' }));
}
