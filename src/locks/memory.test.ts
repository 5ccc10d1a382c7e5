import { describe, expect, it } from 'vitest';
import { createMemoryLockManager } from './memory.ts';

const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms));

describe('createMemoryLockManager', () => {
  it('runs holders of one key one at a time, in arrival order', async () => {
    const locks = createMemoryLockManager();
    const events: string[] = [];
    let inside = 0;
    let maxInside = 0;
    await Promise.all(
      Array.from({ length: 8 }, (_, i) =>
        locks.withLock('k', 1_000, async () => {
          inside++;
          maxInside = Math.max(maxInside, inside);
          events.push(`start${i}`);
          await sleep(2);
          events.push(`end${i}`);
          inside--;
        }),
      ),
    );
    expect(maxInside).toBe(1);
    expect(events).toEqual(Array.from({ length: 8 }, (_, i) => [`start${i}`, `end${i}`]).flat());
  });

  it('does not serialize different keys', async () => {
    const locks = createMemoryLockManager();
    let inside = 0;
    let maxInside = 0;
    await Promise.all(
      ['a', 'b', 'c'].map((k) =>
        locks.withLock(k, 1_000, async () => {
          inside++;
          maxInside = Math.max(maxInside, inside);
          await sleep(5);
          inside--;
        }),
      ),
    );
    expect(maxInside).toBe(3);
  });

  it('releases on a thrown error and passes the error through', async () => {
    const locks = createMemoryLockManager();
    await expect(locks.withLock('k', 1_000, async () => Promise.reject(new Error('boom')))).rejects.toThrow('boom');
    await expect(locks.withLock('k', 1_000, async () => 42)).resolves.toBe(42);
  });

  it('keeps the lock for a live holder that runs past its TTL', async () => {
    const locks = createMemoryLockManager();
    const order: string[] = [];
    const slow = locks.withLock('k', 20, async () => {
      await sleep(60); // three TTLs
      order.push('slow done');
    });
    const next = locks.withLock('k', 1_000, async () => {
      order.push('next start');
    });
    await Promise.all([slow, next]);
    expect(order).toEqual(['slow done', 'next start']);
  });
});
