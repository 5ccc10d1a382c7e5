import { mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import type { ExecutionRequest } from '../api/v1alpha1/index.ts';
import { openEmbeddedStore, type EmbeddedStore } from '../store/embedded/index.ts';
import { executionRequest } from '../store/embedded/testing/fixtures.ts';
import { isStoreError } from '../store/types.ts';
import { Controller, type ControllerHooks, type ObjectKey, type ReconcileResult } from './controller.ts';
import { TerminalError } from './errors.ts';
import { Informer } from './informer.ts';
import type { Logger } from '../lib/logger.ts';
import { ExponentialBackoff } from './backoff.ts';
import { retryOnConflict } from './retry.ts';
import { sleep, until } from './testing/support.ts';

let dir: string;
let store: EmbeddedStore;
let informer: Informer<'ExecutionRequest'>;
const controllers: Controller<'ExecutionRequest'>[] = [];
const logged: { level: string; msg?: string }[] = [];
const logger: Logger = {
  debug: () => undefined,
  info: () => undefined,
  warn: (_, msg) => logged.push({ level: 'warn', msg }),
  error: (_, msg) => logged.push({ level: 'error', msg }),
};

beforeEach(async () => {
  dir = await mkdtemp(join(tmpdir(), 'aw-controller-'));
  store = await openEmbeddedStore({ dir });
  informer = new Informer({ store, kind: 'ExecutionRequest', logger });
  logged.length = 0;
});
afterEach(async () => {
  await Promise.all(controllers.splice(0).map((c) => c.stop({ drain: false })));
  await informer.stop();
  await store.close();
  await rm(dir, { recursive: true, force: true });
});

function controller(
  reconcile: (key: ObjectKey) => Promise<ReconcileResult>,
  opts: { concurrency?: number; hooks?: ControllerHooks } = {},
): Controller<'ExecutionRequest'> {
  const c = new Controller({
    name: 'test',
    informer,
    reconcile,
    logger,
    backoff: new ExponentialBackoff<string>(10, 200),
    ...opts,
  });
  controllers.push(c);
  return c;
}

describe('Controller', () => {
  it('reconciles existing objects on start, then each add, update and delete', async () => {
    await store.create(executionRequest('a'));
    const calls: string[] = [];
    const c = controller(async (key) => {
      const obj = await store.get('ExecutionRequest', key.name, key.namespace).catch((e: unknown) => {
        if (isStoreError(e, 'NotFound')) return undefined;
        throw e;
      });
      calls.push(`${key.namespace}/${key.name}:${obj ? obj.metadata.generation : 'gone'}`);
      return { done: true };
    });
    await c.start();
    await until(() => calls.length === 1);
    const b = await store.create(executionRequest('b'));
    await until(() => calls.length === 2);
    await store.update({ ...b, spec: { ...b.spec, agentId: 'other' } });
    await until(() => calls.length === 3);
    await store.delete('ExecutionRequest', 'b');
    await until(() => calls.length === 4);
    expect(calls).toEqual(['default/a:1', 'default/b:1', 'default/b:2', 'default/b:gone']);
  });

  it('retries a thrown error with backoff until it succeeds, then forgets the failures', async () => {
    await store.create(executionRequest('a'));
    const at: number[] = [];
    const outcomes: string[] = [];
    const c = controller(
      async () => {
        at.push(Date.now());
        if (at.length < 4) throw new Error('transient');
        return { done: true };
      },
      { hooks: { onReconcile: (e) => outcomes.push(e.outcome) } },
    );
    await c.start();
    await until(() => outcomes.length === 4);
    expect(outcomes).toEqual(['error', 'error', 'error', 'done']);
    const gaps = at.slice(1).map((t, i) => t - at[i]!);
    // 10, 20, 40 ms: lower bounds only, timers may fire late on a busy machine.
    expect(gaps[0]).toBeGreaterThanOrEqual(9);
    expect(gaps[1]).toBeGreaterThanOrEqual(19);
    expect(gaps[2]).toBeGreaterThanOrEqual(38);
    expect(c.stats()).toMatchObject({ reconciles: 4, errors: 3, terminalErrors: 0 });
    expect(logged.filter((l) => l.level === 'warn')).toHaveLength(3);
  });

  it('does not retry a TerminalError, and logs it', async () => {
    await store.create(executionRequest('a'));
    let calls = 0;
    const c = controller(async () => {
      calls++;
      throw new TerminalError('spec can never work');
    });
    await c.start();
    await until(() => calls === 1);
    await sleep(150); // several backoff periods
    expect(calls).toBe(1);
    expect(c.stats()).toMatchObject({ reconciles: 1, errors: 0, terminalErrors: 1, delayed: 0 });
    expect(logged).toEqual([{ level: 'error', msg: 'reconcile failed for good; not retrying' }]);
  });

  it('requeues after the requested delay', async () => {
    await store.create(executionRequest('a'));
    const at: number[] = [];
    const c = controller(async () => {
      at.push(Date.now());
      return at.length === 1 ? { requeueAfterMs: 60 } : { done: true };
    });
    await c.start();
    await until(() => at.length === 2);
    expect(at[1]! - at[0]!).toBeGreaterThanOrEqual(58);
    await sleep(100);
    expect(at).toHaveLength(2);
  });

  it('never reconciles one object twice at once, and its last reconcile sees the last change', async () => {
    const names = ['a', 'b', 'c'];
    for (const n of names) await store.create(executionRequest(n));
    const active = new Set<string>();
    let overlap = false;
    const lastSeen = new Map<string, number>();
    const c = controller(
      async (key) => {
        if (active.has(key.name)) overlap = true;
        active.add(key.name);
        await sleep(5);
        const obj = await store.get('ExecutionRequest', key.name);
        lastSeen.set(key.name, obj.metadata.generation!);
        active.delete(key.name);
        return { done: true };
      },
      { concurrency: 4 },
    );
    await c.start();
    for (let i = 0; i < 15; i++) {
      await Promise.all(
        names.map((n) =>
          retryOnConflict(async () => {
            const cur = await store.get('ExecutionRequest', n);
            return store.update({ ...cur, spec: { ...cur.spec, agentId: `agent-${i}` } });
          }),
        ),
      );
    }
    await until(() => names.every((n) => lastSeen.get(n) === 16) && c.stats().inFlight === 0);
    expect(overlap).toBe(false);
  });

  it('drives objects to a status, writing it with retryOnConflict', async () => {
    const n = 30;
    await Promise.all(Array.from({ length: n }, (_, i) => store.create(executionRequest(`r${i}`))));
    const c = new Controller({
      name: 'phase',
      informer,
      logger,
      concurrency: 3,
      // Status writes do not change generation: ignore them, or each write would trigger a reconcile.
      updatePredicate: (o, n2) => o.metadata.generation !== n2.metadata.generation,
      reconcile: async (key) => {
        await retryOnConflict(async () => {
          const obj: ExecutionRequest = await store.get('ExecutionRequest', key.name, key.namespace);
          if (obj.status?.observedGeneration === obj.metadata.generation) return obj;
          return store.updateStatus({
            ...obj,
            status: { ...obj.status, phase: 'Pending', observedGeneration: obj.metadata.generation! },
          });
        });
        return { done: true };
      },
    });
    controllers.push(c);
    await c.start();
    await until(() => c.stats().reconciles >= n && c.stats().inFlight === 0 && c.stats().queueDepth === 0);
    const { items } = await store.list('ExecutionRequest');
    expect(items.every((o) => o.status?.phase === 'Pending' && o.status.observedGeneration === 1)).toBe(true);
    expect(c.stats().reconciles).toBe(n);
  });

  it('stop drains: waits for the reconcile in flight and the keys queued', async () => {
    for (const n of ['a', 'b', 'c']) await store.create(executionRequest(n));
    const finished: string[] = [];
    let started = 0;
    const c = controller(async (key) => {
      started++;
      await sleep(30);
      finished.push(key.name);
      return { done: true };
    });
    await c.start();
    await until(() => started === 1);
    await c.stop();
    expect(finished.sort()).toEqual(['a', 'b', 'c']);
    await store.create(executionRequest('d'));
    await sleep(50);
    expect(finished).toHaveLength(3);
  });

  it('reports queue depth', async () => {
    for (const n of ['a', 'b', 'c']) await store.create(executionRequest(n));
    const depths: number[] = [];
    const c = controller(async () => ({ done: true }), { hooks: { onQueueDepth: (e) => depths.push(e.depth) } });
    await c.start();
    await until(() => c.stats().reconciles === 3);
    expect(Math.max(...depths)).toBe(3);
    expect(depths.at(-1)).toBe(0);
  });
});
