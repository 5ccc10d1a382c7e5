export type * from './types.ts';
export { createChainWorker, weiToUsd, type ChainWorkerDeps, type LocalChainWorker } from './worker.ts';
export { ChainError, isChainError, type ChainErrorCode } from './errors.ts';
export { deriveOwnerPrivateKey, deriveOwnerAccount, walletSalt } from './ownerKey.ts';
export { decodeRevert, type DecodedRevert } from './revert.ts';
export type { ChainLogger } from './logger.ts';
export { bundlesSince, type BundlerStats } from './bundler/bundler.ts';
export type { LogScanOptions } from './bundler/outcomeLookup.ts';
