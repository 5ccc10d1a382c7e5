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
  withLock<T>(key: string, ttlMs: number, fn: () => Promise<T>): Promise<T>;
}
