export type { RateDecision, RateLimit, RateLimiter } from './types.ts';
export { createInMemoryRateLimiter, type InMemoryRateLimiterOptions } from './memory.ts';
