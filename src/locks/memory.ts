import type { LockManager } from './types.ts';

interface Waiter {
  resolve: (lease: number) => void;
}

interface KeyQueue {
  /** Lease id of the current holder; undefined when free. */
  holder: number | undefined;
  waiters: Waiter[];
}

/**
 * In-process {@link LockManager}: waiters of one key are served first come, first served. A holder in this
 * process cannot die without its `finally` releasing the lock (or the whole process, locks and all, ending),
 * so the lease never needs to lapse: `ttlMs` is checked but not timed.
 *
 * @example
 * const locks = createMemoryLockManager();
 * const n = await locks.withLock(`nonce:base:${sender}`, 10_000, () => allocate(sender));
 */
export function createMemoryLockManager(): LockManager {
  const queues = new Map<string, KeyQueue>();
  let nextLease = 1;

  function grant(q: KeyQueue, w: Waiter): void {
    const lease = nextLease++;
    q.holder = lease;
    w.resolve(lease);
  }

  function acquire(key: string): Promise<number> {
    let q = queues.get(key);
    if (!q) {
      q = { holder: undefined, waiters: [] };
      queues.set(key, q);
    }
    const queue = q;
    return new Promise<number>((resolve) => {
      const w = { resolve };
      if (queue.holder === undefined) grant(queue, w);
      else queue.waiters.push(w);
    });
  }

  function release(key: string, lease: number): void {
    const q = queues.get(key);
    if (!q || q.holder !== lease) return;
    q.holder = undefined;
    const next = q.waiters.shift();
    if (next) grant(q, next);
    else queues.delete(key);
  }

  return {
    async withLock<T>(key: string, ttlMs: number, fn: () => Promise<T>): Promise<T> {
      if (!(ttlMs > 0)) throw new RangeError(`lock TTL must be positive, got ${ttlMs}`);
      const lease = await acquire(key);
      try {
        return await fn();
      } finally {
        release(key, lease);
      }
    },
  };
}
