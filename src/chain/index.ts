export type * from './types.ts';
export { createChainWorker, type ChainWorkerDeps, type LocalChainWorker } from './worker/index.ts';
export { weiToUsd } from './worker/estimates.ts';
export { MAX_READ_CALLS } from './worker/reads.ts';
export { ChainError, isChainError, type ChainErrorCode } from './errors.ts';
export { deriveOwnerPrivateKey, deriveOwnerAccount, walletSalt } from './ownerKey.ts';
export { decodeRevert, type DecodedRevert } from './revert.ts';
export { bundlesSince, type BundlerStats } from './bundler/bundler.ts';
export type { LogScanOptions } from './bundler/outcomeLookup.ts';
