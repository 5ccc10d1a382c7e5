export { buildGateway } from './app.ts';
export type { ChainProbe, GatewayDeps } from './context.ts';
export { GatewayError, type ErrorBody } from './errors.ts';
export { createInMemoryRateLimiter, type RateDecision, type RateLimit, type RateLimiter } from './rateLimit.ts';
export { IDEMPOTENCY_BODY_HASH } from './routes/execute.ts';
