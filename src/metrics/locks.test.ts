import { describe, expect, it } from 'vitest';
import { createMemoryLockManager } from '../locks/memory.ts';
import type { LockManager } from '../locks/types.ts';
import { instrumentLockManager, lockKind } from './locks.ts';
import { createMetrics } from './registry.ts';
import { parseExposition } from './testing/exposition.ts';

const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms));

describe('instrumentLockManager', () => {
  it('observes each caller’s wait from the call until its turn, under contention', async () => {
    const metrics = createMetrics({ defaultMetrics: false });
    const locks = instrumentLockManager(createMemoryLockManager(), metrics);
    const order: number[] = [];
    // Four callers on one key, each holding it 60 ms: they wait about 0, 60, 120 and 180 ms.
    await Promise.all(
      [0, 1, 2, 3].map((i) =>
        locks.withLock('nonce:base:0xabc', 5_000, async () => {
          order.push(i);
          await sleep(60);
        }),
      ),
    );
    expect(order).toEqual([0, 1, 2, 3]);
    const e = parseExposition(await metrics.scrape());
    const lock = { lock: 'nonce' };
    expect(e.value('agentwallet_lock_wait_seconds_count', lock)).toBe(4);
    const sum = e.value('agentwallet_lock_wait_seconds_sum', lock)!;
    expect(sum).toBeGreaterThan(0.3); // 0 + 60 + 120 + 180 ms, less timer slack
    expect(sum).toBeLessThan(0.6);
    expect(e.value('agentwallet_lock_wait_seconds_bucket', { ...lock, le: '0.01' })).toBe(1); // only the first went straight in
    expect(e.value('agentwallet_lock_wait_seconds_bucket', { ...lock, le: '0.25' })).toBe(4);
  });

  it('labels by the key’s kind only: a thousand wallets are one series', async () => {
    const metrics = createMetrics({ defaultMetrics: false });
    const locks = instrumentLockManager(createMemoryLockManager(), metrics);
    await Promise.all(
      Array.from({ length: 1_000 }, (_, i) => locks.withLock(`nonce:base:0x${i.toString(16).padStart(40, '0')}`, 1_000, async () => i)),
    );
    await locks.withLock('executor:base:0xdef', 1_000, async () => undefined);
    // Keys from elsewhere cannot mint series either: malformed kinds and kinds past the budget are `other`.
    await locks.withLock('Weird Key With Spaces', 1_000, async () => undefined);
    for (let i = 0; i < 40; i++) await locks.withLock(`kind${i}:x`, 1_000, async () => undefined);
    const e = parseExposition(await metrics.scrape());
    expect(e.value('agentwallet_lock_wait_seconds_count', { lock: 'nonce' })).toBe(1_000);
    expect(e.value('agentwallet_lock_wait_seconds_count', { lock: 'executor' })).toBe(1);
    expect(e.series('agentwallet_lock_wait_seconds_count')).toBe(20 + 1); // the budget of 20 kinds, then `other`
    expect(e.value('agentwallet_lock_wait_seconds_count', { lock: 'other' })).toBe(1 + 22);
  });

  it('counts a lock that could not be had, not a failure of the work done under it; errors pass through', async () => {
    const metrics = createMetrics({ defaultMetrics: false });
    const unavailable: LockManager = {
      withLock: async () => {
        throw new Error('redis: connection refused');
      },
    };
    await expect(instrumentLockManager(unavailable, metrics).withLock('nonce:a', 1_000, async () => 1)).rejects.toThrow(/connection refused/);
    const locks = instrumentLockManager(createMemoryLockManager(), metrics);
    await expect(
      locks.withLock('nonce:b', 1_000, async () => {
        throw new Error('simulation failed');
      }),
    ).rejects.toThrow(/simulation failed/);
    expect(await locks.withLock('nonce:c', 1_000, async () => 42)).toBe(42);
    const e = parseExposition(await metrics.scrape());
    expect(e.value('agentwallet_lock_acquire_failures_total', { lock: 'nonce' })).toBe(1);
    expect(e.value('agentwallet_lock_wait_seconds_count', { lock: 'nonce' })).toBe(2);
  });

  it('takes the kind from the first segment of the key', () => {
    expect(lockKind('nonce:base:0xabc')).toBe('nonce');
    expect(lockKind('executor:arbitrum:0xdef')).toBe('executor');
    expect(lockKind('plain')).toBe('plain');
  });
});
