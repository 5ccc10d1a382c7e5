import { AgentWalletError } from '../lib/errors.ts';

/** Unavailable: the lock service (Redis) did not answer; Closed: the manager was closed. */
export type LockErrorCode = 'Unavailable' | 'Closed';

export class LockError extends AgentWalletError<LockErrorCode> {
  override readonly name = 'LockError';
}

export const isLockError = (e: unknown, code?: LockErrorCode): e is LockError =>
  e instanceof LockError && (code === undefined || e.code === code);

/**
 * Mutual exclusion by key, with a lease. Locks are a fast path only: they keep two allocations of the same
 * wallet's nonce from racing in the common case, but correctness never rests on them — the EntryPoint nonce is
 * the fencing token (a second operation with a used nonce fails validation and is never executed).
 *
 * `ttlMs` is the lease. A live holder keeps the lock however long `fn` runs (a shared backend renews the lease
 * while it runs); the TTL bounds how long a holder that died — a crashed process, a lost connection — keeps
 * the others waiting. Short TTLs make a crashed chain worker's locks free again quickly.
 */
export interface LockManager {
  /** Rejects with LockError `Unavailable` when a shared backend cannot be reached (never waits forever). */
  withLock<T>(key: string, ttlMs: number, fn: () => Promise<T>): Promise<T>;
}
