export { buildGateway } from './app.ts';
export type { GatewayDeps } from './context.ts';
export { GatewayError } from './errors.ts';
export { createInMemoryRateLimiter, type RateDecision, type RateLimit, type RateLimiter } from '../ratelimit/index.ts';

