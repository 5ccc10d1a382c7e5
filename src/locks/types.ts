/**
 * Mutual exclusion by key, with a lease. Locks are a fast path only: they keep two allocations of the same
 * wallet's nonce from racing in the common case, but correctness never rests on them — the EntryPoint nonce is
 * the fencing token (a second operation with a used nonce fails validation and is never executed).
 *
 * `ttlMs` is the lease: a holder that runs longer loses exclusivity (the next waiter proceeds), exactly as a
 * Redis lock with an expiry would behave. Pick a TTL well above the critical section's normal duration.
 */
export interface LockManager {
  withLock<T>(key: string, ttlMs: number, fn: () => Promise<T>): Promise<T>;
}
