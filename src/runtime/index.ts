export { WorkQueue, type WorkQueueOptions, type ShutdownOptions } from './workQueue.ts';
export { ExponentialBackoff, type Backoff } from './backoff.ts';
export { Informer, cacheKey, type EventHandlers, type InformerOptions } from './informer.ts';
export {
  Controller,
  type ControllerHooks,
  type ControllerOptions,
  type ControllerStats,
  type ObjectKey,
  type ReconcileOutcome,
  type ReconcileResult,
  type Reconciler,
} from './controller.ts';
export { TerminalError, isTerminalError } from './errors.ts';
export { retryOnConflict, type RetryOnConflictOptions } from './retry.ts';
export { stderrLogger, type Logger } from '../lib/logger.ts';
export { InformerCache, mergeIndexers, type CacheReader, type Indexers, type IndexersByKind, type InformerCacheOptions } from './cache.ts';
export { attachWatch, watchOf, type Change, type Watch, type WatchOf } from './watches.ts';
