/** How long to wait before retrying a key that failed (client-go calls it a rate limiter); per key, reset by forget(). */
export interface Backoff<K> {
  /** The delay before the next retry of `key`, counting this failure. */
  when(key: K): number;
  forget(key: K): void;
  numRequeues(key: K): number;
}

/**
 * controller-runtime's per-item exponential failure limiter: base·2^failures, capped. Defaults 5 ms doubling
 * to 60 s, so a persistently failing key settles at one attempt a minute.
 */
export class ExponentialBackoff<K> implements Backoff<K> {
  private readonly failures = new Map<K, number>();

  constructor(
    private readonly baseMs = 5,
    private readonly maxMs = 60_000,
  ) {}

  when(key: K): number {
    const n = this.failures.get(key) ?? 0;
    this.failures.set(key, n + 1);
    // 2^n overflows to Infinity quickly, which Math.min handles.
    return Math.min(this.baseMs * 2 ** n, this.maxMs);
  }

  forget(key: K): void {
    this.failures.delete(key);
  }

  numRequeues(key: K): number {
    return this.failures.get(key) ?? 0;
  }
}
