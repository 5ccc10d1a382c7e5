import { mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { ChainError } from '../chain/errors.ts';
import { Controller } from '../runtime/controller.ts';
import { TerminalError } from '../runtime/errors.ts';
import { Informer } from '../runtime/informer.ts';
import { ExponentialBackoff } from '../runtime/backoff.ts';
import { quiet, sleep, until } from '../runtime/testing/support.ts';
import { WorkQueue } from '../runtime/workQueue.ts';
import { openEmbeddedStore, type EmbeddedStore } from '../store/embedded/index.ts';
import { executionRequest } from '../store/embedded/testing/fixtures.ts';
import { controllerMetrics } from './controller.ts';
import { createMetrics } from './registry.ts';
import { parseExposition } from './testing/exposition.ts';

describe('work queue metrics', () => {
  it('counts adds (not re-adds of a waiting key), depth, waits, work time and retries', async () => {
    const metrics = createMetrics({ defaultMetrics: false });
    const queue = new WorkQueue<string>({ metrics: controllerMetrics(metrics, 'q').workQueue, backoff: new ExponentialBackoff(5, 20) });
    for (const k of ['a', 'b', 'c', 'a', 'b', 'd', 'e']) queue.add(k);
    const q = { controller: 'q' };
    let e = parseExposition(await metrics.scrape());
    expect(e.value('agentwallet_workqueue_adds_total', q)).toBe(5);
    expect(e.value('agentwallet_workqueue_depth', q)).toBe(5);

    let failedOnce = false;
    const done: string[] = [];
    await sleep(30); // the five wait at least this long
    queue.start(async (k) => {
      await sleep(10);
      if (k === 'c' && !failedOnce) {
        failedOnce = true;
        throw new Error('transient');
      }
      done.push(k);
    });
    await until(() => done.length === 5);
    e = parseExposition(await metrics.scrape());
    expect(e.value('agentwallet_workqueue_depth', q)).toBe(0);
    expect(e.value('agentwallet_workqueue_retries_total', q)).toBe(1);
    expect(e.value('agentwallet_workqueue_adds_total', q)).toBe(6); // the retry of c is an add
    expect(e.value('agentwallet_workqueue_queue_duration_seconds_count', q)).toBe(6);
    expect(e.value('agentwallet_workqueue_queue_duration_seconds_bucket', { ...q, le: '0.025' })).toBeLessThanOrEqual(1); // only the retry waited briefly
    expect(e.value('agentwallet_workqueue_work_duration_seconds_count', q)).toBe(6);
    expect(e.value('agentwallet_workqueue_work_duration_seconds_sum', q)).toBeGreaterThanOrEqual(0.055);
    await queue.shutdown();
  });
});

describe('controller metrics (a real Controller on the embedded store)', () => {
  let dir: string;
  let store: EmbeddedStore;
  let informer: Informer<'ExecutionRequest'>;
  let controller: Controller<'ExecutionRequest'> | undefined;

  beforeEach(async () => {
    dir = await mkdtemp(join(tmpdir(), 'aw-metrics-'));
    store = await openEmbeddedStore({ dir });
    informer = new Informer({ store, kind: 'ExecutionRequest', logger: quiet });
  });
  afterEach(async () => {
    await controller?.stop({ drain: false });
    await informer.stop();
    await store.close();
    await rm(dir, { recursive: true, force: true });
  });

  it('counts reconciles by result and errors by code, and retries the failed keys', async () => {
    const metrics = createMetrics({ defaultMetrics: false });
    const attempts = new Map<string, number>();
    controller = new Controller({
      name: 'execution',
      informer,
      logger: quiet,
      backoff: new ExponentialBackoff<string>(5, 50),
      metrics: controllerMetrics(metrics, 'execution'),
      reconcile: async ({ name }) => {
        const n = (attempts.get(name) ?? 0) + 1;
        attempts.set(name, n);
        if (name === 'flaky' && n <= 2) throw new ChainError('rpc_unavailable', 'the chain did not answer');
        if (name === 'invalid') throw new TerminalError('spec cannot be served');
        if (name === 'plain-error' && n === 1) throw new Error('no code here');
        if (name === 'later' && n === 1) return { requeueAfterMs: 5 };
        return { done: true };
      },
    });
    for (const name of ['ok', 'flaky', 'invalid', 'plain-error', 'later']) await store.create(executionRequest(name));
    await controller.start();
    await until(() => attempts.get('flaky') === 3 && attempts.get('later') === 2 && attempts.get('plain-error') === 2);
    await sleep(20);

    const e = parseExposition(await metrics.scrape());
    const c = { controller: 'execution' };
    expect(e.value('agentwallet_reconcile_total', { ...c, result: 'success' })).toBe(4); // ok, and the last attempt of flaky, plain-error and later
    expect(e.value('agentwallet_reconcile_total', { ...c, result: 'error' })).toBe(3);
    expect(e.value('agentwallet_reconcile_total', { ...c, result: 'terminal_error' })).toBe(1);
    expect(e.value('agentwallet_reconcile_total', { ...c, result: 'requeue_after' })).toBe(1);
    expect(e.value('agentwallet_reconcile_errors_total', { ...c, code: 'rpc_unavailable' })).toBe(2);
    expect(e.value('agentwallet_reconcile_errors_total', { ...c, code: 'Terminal' })).toBe(1);
    expect(e.value('agentwallet_reconcile_errors_total', { ...c, code: 'unknown' })).toBe(1);
    expect(e.value('agentwallet_workqueue_retries_total', c)).toBe(3); // terminal errors are not retried
    expect(e.value('agentwallet_reconcile_time_seconds_count', c)).toBe(9);
    expect(e.value('agentwallet_workqueue_depth', c)).toBe(0);
  });

  it('keeps error codes to a bounded set of series', async () => {
    const metrics = createMetrics({ defaultMetrics: false });
    const m = controllerMetrics(metrics, 'execution');
    for (let i = 0; i < 200; i++) m.reconciled({ outcome: 'error', seconds: 0.001, error: Object.assign(new Error('x'), { code: `code_${i}` }) });
    m.reconciled({ outcome: 'error', seconds: 0.001, error: Object.assign(new Error('x'), { code: 'has spaces and {braces}' }) });
    const e = parseExposition(await metrics.scrape());
    expect(e.series('agentwallet_reconcile_errors_total')).toBe(51); // 50 codes, then `other`
    expect(e.value('agentwallet_reconcile_errors_total', { controller: 'execution', code: 'other' })).toBe(151);
  });
});
