import type { LockManager } from './types.ts';

interface Waiter {
  ttlMs: number;
  resolve: (lease: number) => void;
}

interface KeyQueue {
  /** Lease id of the current holder; undefined when free. */
  holder: number | undefined;
  timer: NodeJS.Timeout | undefined;
  waiters: Waiter[];
}

/**
 * In-process {@link LockManager}: waiters of one key are served first come, first served. A lease that
 * outlives its `ttlMs` is revoked and the next waiter runs (the late holder's release is then ignored),
 * matching the semantics of a Redis lock with an expiry.
 *
 * @example
 * const locks = createMemoryLockManager();
 * const n = await locks.withLock(`nonce:base:${sender}`, 10_000, () => allocate(sender));
 */
export function createMemoryLockManager(): LockManager {
  const queues = new Map<string, KeyQueue>();
  let nextLease = 1;

  function grant(key: string, q: KeyQueue, w: Waiter): void {
    const lease = nextLease++;
    q.holder = lease;
    q.timer = setTimeout(() => release(key, lease), w.ttlMs);
    q.timer.unref?.();
    w.resolve(lease);
  }

  function acquire(key: string, ttlMs: number): Promise<number> {
    let q = queues.get(key);
    if (!q) {
      q = { holder: undefined, timer: undefined, waiters: [] };
      queues.set(key, q);
    }
    const queue = q;
    return new Promise<number>((resolve) => {
      const w = { ttlMs, resolve };
      if (queue.holder === undefined) grant(key, queue, w);
      else queue.waiters.push(w);
    });
  }

  function release(key: string, lease: number): void {
    const q = queues.get(key);
    if (!q || q.holder !== lease) return; // this lease was already revoked by its TTL
    if (q.timer) clearTimeout(q.timer);
    q.holder = undefined;
    q.timer = undefined;
    const next = q.waiters.shift();
    if (next) grant(key, q, next);
    else queues.delete(key);
  }

  return {
    async withLock<T>(key: string, ttlMs: number, fn: () => Promise<T>): Promise<T> {
      if (!(ttlMs > 0)) throw new RangeError(`lock TTL must be positive, got ${ttlMs}`);
      const lease = await acquire(key, ttlMs);
      try {
        return await fn();
      } finally {
        release(key, lease);
      }
    },
  };
}
