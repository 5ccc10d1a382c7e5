import { describe, expect, it, vi } from 'vitest';
import { ExponentialBackoff } from './backoff.ts';
import { WorkQueue } from './workQueue.ts';

const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms));

/**
 * Moves the fake clock (timers and Date) by `ms`, then lets the queue's pump run: it starts workers on a real
 * setImmediate, so that each key leaves a turn for I/O.
 */
async function advance(ms: number): Promise<void> {
  await vi.advanceTimersByTimeAsync(ms);
  for (let i = 0; i < 3; i++) await new Promise((r) => setImmediate(r));
}

/** Resolves when `pred` holds, polling; fails the test after `timeoutMs`. */
async function until(pred: () => boolean, timeoutMs = 5_000): Promise<void> {
  const deadline = Date.now() + timeoutMs;
  while (!pred()) {
    if (Date.now() > deadline) throw new Error('condition not met in time');
    await sleep(2);
  }
}

describe('WorkQueue', () => {
  it('queues a waiting key once however often it is added, in FIFO order', async () => {
    const q = new WorkQueue<string>();
    const seen: string[] = [];
    for (const k of ['a', 'b', 'a', 'c', 'b', 'a']) q.add(k);
    expect(q.depth).toBe(3);
    q.start(async (k) => {
      seen.push(k);
    });
    await until(() => seen.length === 3);
    await sleep(10);
    expect(seen).toEqual(['a', 'b', 'c']);
  });

  it('never processes one key twice at once; an add during processing runs it once more afterwards', async () => {
    const q = new WorkQueue<string>({ concurrency: 4 });
    let active = 0;
    let maxActive = 0;
    let runs = 0;
    q.start(async () => {
      active++;
      runs++;
      maxActive = Math.max(maxActive, active);
      await sleep(20);
      active--;
    });
    q.add('a');
    await until(() => runs === 1);
    for (let i = 0; i < 10; i++) q.add('a'); // while in flight: all fold into one re-run
    expect(q.depth).toBe(0);
    await until(() => runs === 2 && active === 0);
    await sleep(40);
    expect(runs).toBe(2);
    expect(maxActive).toBe(1);
  });

  it('processes different keys in parallel up to its concurrency', async () => {
    const q = new WorkQueue<string>({ concurrency: 3 });
    let active = 0;
    let maxActive = 0;
    let done = 0;
    q.start(async () => {
      active++;
      maxActive = Math.max(maxActive, active);
      await sleep(15);
      active--;
      done++;
    });
    for (let i = 0; i < 10; i++) q.add(`k${i}`);
    await until(() => done === 10);
    expect(maxActive).toBe(3);
  });

  it('addAfter delays the add; of two pending delays the earlier wins', async () => {
    vi.useFakeTimers({ toFake: ['setTimeout', 'clearTimeout', 'Date'] });
    try {
      const q = new WorkQueue<string>();
      const at: number[] = [];
      const t0 = Date.now();
      q.start(async () => {
        at.push(Date.now() - t0);
      });
      q.addAfter('a', 400);
      q.addAfter('a', 40);
      q.addAfter('a', 600); // later than the pending one: no effect
      expect(q.delayedCount).toBe(1);
      await advance(39);
      expect(at).toEqual([]);
      await advance(1);
      expect(at).toEqual([40]);
      await advance(1_000); // past every delay given: the replaced timers never fire
      expect(at).toEqual([40]);
    } finally {
      vi.useRealTimers();
    }
  });

  it('addRateLimited backs off exponentially per key; forget resets', async () => {
    vi.useFakeTimers({ toFake: ['setTimeout', 'clearTimeout', 'Date'] });
    try {
      const q = new WorkQueue<string>({ backoff: new ExponentialBackoff(20, 1_000) });
      let runs = 0;
      q.start(async () => {
        runs++;
      });
      for (const expected of [20, 40, 80]) {
        const before = runs;
        q.addRateLimited('a');
        await advance(expected - 1);
        expect(runs, `not before ${expected} ms`).toBe(before);
        await advance(1);
        expect(runs, `at ${expected} ms`).toBe(before + 1);
      }
      expect(q.numRequeues('a')).toBe(3);
      q.forget('a');
      expect(q.numRequeues('a')).toBe(0);
    } finally {
      vi.useRealTimers();
    }
  });

  it('ExponentialBackoff doubles from 5 ms and caps at 60 s by default', () => {
    const b = new ExponentialBackoff<string>();
    const delays = Array.from({ length: 20 }, () => b.when('k'));
    expect(delays.slice(0, 4)).toEqual([5, 10, 20, 40]);
    expect(delays.at(-1)).toBe(60_000);
    expect(b.when('other')).toBe(5);
  });

  it('retries a key whose handler rejects, with backoff, and reports the error', async () => {
    const errors: unknown[] = [];
    const q = new WorkQueue<string>({ backoff: new ExponentialBackoff(5, 100), onError: (_, e) => errors.push(e) });
    let calls = 0;
    q.start(async () => {
      calls++;
      if (calls < 3) throw new Error(`boom ${calls}`);
    });
    q.add('a');
    await until(() => calls === 3);
    expect(errors.map((e) => (e as Error).message)).toEqual(['boom 1', 'boom 2']);
  });

  it('shutdown without drain drops waiting keys but waits for the ones in flight', async () => {
    const q = new WorkQueue<string>();
    const finished: string[] = [];
    q.start(async (k) => {
      await sleep(50);
      finished.push(k);
    });
    q.add('a');
    q.add('b');
    q.addAfter('c', 10);
    await sleep(5); // 'a' is in flight
    await q.shutdown({ drain: false });
    expect(finished).toEqual(['a']);
    q.add('d');
    await sleep(80);
    expect(finished).toEqual(['a']);
  });

  it('shutdown with drain processes the waiting keys first', async () => {
    const q = new WorkQueue<string>({ concurrency: 2 });
    const finished: string[] = [];
    q.start(async (k) => {
      await sleep(10);
      finished.push(k);
    });
    for (const k of ['a', 'b', 'c', 'd', 'e']) q.add(k);
    await sleep(1);
    await q.shutdown({ drain: true });
    expect(finished.sort()).toEqual(['a', 'b', 'c', 'd', 'e']);
    expect(q.inFlight).toBe(0);
  });

  it('never runs a handler inside add()', async () => {
    const q = new WorkQueue<string>();
    let ran = false;
    q.start(async () => {
      ran = true;
    });
    q.add('a');
    expect(ran).toBe(false);
    await until(() => ran);
  });

  it('a key requeued at once, again and again, still leaves turns to timers and I/O', async () => {
    // Each reconcile of such a key can be pure CPU and in-memory promises; on microtasks alone the loop would
    // never let the timer below (or a watch event that ends the loop) run.
    const q = new WorkQueue<string>({ concurrency: 1 });
    let runs = 0;
    q.start(async (key) => {
      runs += 1;
      q.add(key);
    });
    q.add('busy');
    await new Promise((resolve) => setTimeout(resolve, 5));
    await new Promise((resolve) => setImmediate(resolve));
    expect(runs).toBeGreaterThan(1);
    await q.shutdown();
  });

  it('reports the depth of waiting keys', async () => {
    const depths: number[] = [];
    const q = new WorkQueue<string>({ onDepth: (d) => depths.push(d) });
    q.add('a');
    q.add('b');
    q.start(async () => undefined);
    await until(() => depths.at(-1) === 0);
    expect(depths.slice(0, 2)).toEqual([1, 2]);
  });
});
