import type { LockManager } from '../locks/types.ts';
import { BoundedLabel } from './labels.ts';
import type { Metrics } from './registry.ts';

/**
 * A LockManager (in-process or Redis) that reports how long each caller waited for its lock:
 * `agentwallet_lock_wait_seconds{lock}`, from the call to the moment `fn` starts, and
 * `agentwallet_lock_acquire_failures_total{lock}` when the lock could not be had at all. `lock` is the key's
 * first `:`-separated segment (`nonce`, `executor`), never the whole key: one series per wallet would be
 * unbounded.
 */
export function instrumentLockManager(locks: LockManager, metrics: Metrics): LockManager {
  const kinds = new BoundedLabel(20, /^[a-z][a-z0-9_-]{0,31}$/);
  return {
    async withLock<T>(key: string, ttlMs: number, fn: () => Promise<T>): Promise<T> {
      const lock = kinds.value(lockKind(key));
      const asked = performance.now();
      let started = false;
      try {
        return await locks.withLock(key, ttlMs, () => {
          started = true;
          metrics.lockWait.observe({ lock }, (performance.now() - asked) / 1000);
          return fn();
        });
      } catch (e) {
        if (!started) metrics.lockFailures.inc({ lock });
        throw e;
      }
    },
  };
}

/** `nonce:base:0xabc…` → `nonce`. */
export const lockKind = (key: string): string => key.split(':', 1)[0]!;
