/** The aUSD faucet (spec §2.7 `{faucet_url}`): see docs/faucet.md. */
export * from './config.ts';
export { FaucetError, type FaucetErrorCode } from './errors.ts';
export { createFaucet, type Faucet } from './faucet.ts';
export { clientKey, createDripLimits, type DripLimits, type DripLimitDecision } from './limits.ts';
export { createTokenSender, type DripReceipt, type FaucetChainWorker, type TokenSender } from './sender.ts';
export { buildFaucetApp } from './app.ts';
export { DEFAULT_FAUCET_PORT, startFaucet, type RunningFaucet, type StartFaucetOptions } from './server.ts';
export type { DripBody, DripResult, FaucetInfo } from '../api/http/faucet.ts';
