import { mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import type { ExecutionPhase, ExecutionRequest } from '../api/v1alpha1/index.ts';
import { ANNOTATIONS } from '../api/v1alpha1/index.ts';
import { Informer } from '../runtime/informer.ts';
import { silentLogger, type Logger } from '../lib/logger.ts';
import { idempotentRequestId, newRequestId, requestIdTimeMs } from '../api/v1alpha1/index.ts';
import { openEmbeddedStore, type EmbeddedStore } from '../store/embedded/index.ts';
import { executionRequest } from '../store/embedded/testing/fixtures.ts';
import { instrumentExecutionInformer, PHASE_INDEX, phaseIndexer } from './execution.ts';
import { createMetrics, type Metrics } from './registry.ts';
import { parseExposition } from './testing/exposition.ts';

const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms));
const quiet: Logger = silentLogger;

describe('request metrics from the execution informer', () => {
  let dir: string;
  let store: EmbeddedStore;
  let informer: Informer<'ExecutionRequest'>;
  let metrics: Metrics;

  beforeEach(async () => {
    dir = await mkdtemp(join(tmpdir(), 'aw-exec-metrics-'));
    store = await openEmbeddedStore({ dir });
    informer = new Informer({ store, kind: 'ExecutionRequest', logger: quiet, indexers: { [PHASE_INDEX]: phaseIndexer } });
    metrics = createMetrics({ defaultMetrics: false });
  });
  afterEach(async () => {
    await informer.stop();
    await store.close();
    await rm(dir, { recursive: true, force: true });
  });

  const attach = () =>
    instrumentExecutionInformer(metrics, informer, {
      chains: ['base', 'ethereum'],
      acceptedAt: (r) => requestIdTimeMs(r.metadata.annotations?.[ANNOTATIONS.accepted]),
    });

  async function create(name: string, chain: ExecutionRequest['spec']['chain'], acceptedAt?: number) {
    const r = executionRequest(name);
    r.spec.chain = chain;
    if (acceptedAt !== undefined) r.metadata.annotations = { [ANNOTATIONS.accepted]: newRequestId(acceptedAt) };
    return store.create(r);
  }
  async function write(name: string, phase: ExecutionPhase, extra: Partial<NonNullable<ExecutionRequest['status']>> = {}) {
    const current = await store.get('ExecutionRequest', name);
    return store.updateStatus({ ...current, status: { ...current.status, phase, ...extra } });
  }
  /** Moves a request to `phase` and waits until the informer has seen it. */
  async function move(name: string, phase: ExecutionPhase, extra: Partial<NonNullable<ExecutionRequest['status']>> = {}) {
    const written = await write(name, phase, extra);
    for (let i = 0; informer.get(name)?.metadata.resourceVersion !== written.metadata.resourceVersion; i++) {
      if (i > 1_000) throw new Error(`informer did not see ${name} → ${phase}`);
      await sleep(2);
    }
  }
  const scrape = async () => parseExposition(await metrics.scrape());

  it('counts requests by phase and chain from the cache, and times each phase and the whole run', async () => {
    const acceptedAt = Date.now() - 2_000;
    await create('r1', 'base', acceptedAt);
    await create('r2', 'ethereum'); // no acceptance annotation: creationTimestamp stands in
    await write('r2', 'Queued'); // before the informer runs
    informer.start();
    await informer.waitForSync();
    const detach = attach();
    await sleep(5); // existing objects reach the handler as adds

    let e = await scrape();
    expect(e.series('agentwallet_execution_requests')).toBe(16);
    expect(e.value('agentwallet_execution_requests', { phase: 'Pending', chain: 'base' })).toBe(1); // no status yet counts as Pending
    expect(e.value('agentwallet_execution_requests', { phase: 'Queued', chain: 'ethereum' })).toBe(1);
    expect(e.value('agentwallet_execution_requests', { phase: 'Confirmed', chain: 'base' })).toBe(0);

    await move('r1', 'Queued');
    await sleep(60);
    await move('r1', 'Broadcasting');
    await sleep(30);
    await move('r1', 'Confirmed', { completionTime: new Date().toISOString() });
    await move('r2', 'Failed', { completionTime: new Date().toISOString() });

    e = await scrape();
    expect(e.value('agentwallet_execution_requests', { phase: 'Confirmed', chain: 'base' })).toBe(1);
    expect(e.value('agentwallet_execution_requests', { phase: 'Failed', chain: 'ethereum' })).toBe(1);
    expect(e.value('agentwallet_execution_requests', { phase: 'Pending', chain: 'base' })).toBe(0);
    expect(e.value('agentwallet_execution_requests', { phase: 'Queued', chain: 'ethereum' })).toBe(0);

    const phase = (p: string, chain = 'base') => ({
      count: e.value('agentwallet_execution_phase_duration_seconds_count', { phase: p, chain }),
      sum: e.value('agentwallet_execution_phase_duration_seconds_sum', { phase: p, chain }) ?? 0,
    });
    // Pending counts from acceptance (2 s ago), the others from when the informer saw them begin.
    expect(phase('Pending').count).toBe(1);
    expect(phase('Pending').sum).toBeGreaterThanOrEqual(2);
    expect(phase('Pending').sum).toBeLessThan(3);
    expect(phase('Queued').count).toBe(1);
    expect(phase('Queued').sum).toBeGreaterThanOrEqual(0.05);
    expect(phase('Broadcasting').count).toBe(1);
    expect(phase('Broadcasting').sum).toBeGreaterThanOrEqual(0.025);
    // r2 entered Queued before anyone watched: how long it stayed is unknown, so not observed.
    expect(phase('Queued', 'ethereum').count).toBeUndefined();

    const run = (outcome: string, chain: string) => ({
      count: e.value('agentwallet_execution_duration_seconds_count', { outcome, chain }),
      sum: e.value('agentwallet_execution_duration_seconds_sum', { outcome, chain }) ?? 0,
    });
    expect(run('Confirmed', 'base').count).toBe(1);
    expect(run('Confirmed', 'base').sum).toBeGreaterThanOrEqual(2.09);
    expect(run('Confirmed', 'base').sum).toBeLessThan(3);
    expect(run('Failed', 'ethereum').count).toBe(1); // from creationTimestamp

    await store.delete('ExecutionRequest', 'r1');
    await sleep(20);
    e = await scrape();
    expect(e.value('agentwallet_execution_requests', { phase: 'Confirmed', chain: 'base' })).toBe(0);

    detach();
    await create('r3', 'base', Date.now());
    await sleep(10);
    await move('r3', 'Queued');
    e = await scrape();
    expect(e.series('agentwallet_execution_requests')).toBe(0);
    expect(e.value('agentwallet_execution_phase_duration_seconds_count', { phase: 'Pending', chain: 'base' })).toBe(1); // r3's not observed
  });

  it('refuses an informer without the phase index', async () => {
    const bare = new Informer({ store, kind: 'ExecutionRequest', logger: quiet });
    expect(() => instrumentExecutionInformer(metrics, bare, { chains: ['base'] })).toThrow(/no index/);
    await bare.stop();
  });
});

describe('requestIdTimeMs', () => {
  it('reads the time of a fresh request id, and nothing from other ids', () => {
    const t = Date.UTC(2025, 0, 2, 3, 4, 5, 678);
    expect(requestIdTimeMs(newRequestId(t))).toBe(t);
    expect(requestIdTimeMs(idempotentRequestId('acme', 'key-1'))).toBeUndefined();
    expect(requestIdTimeMs(undefined)).toBeUndefined();
    expect(requestIdTimeMs('req-short')).toBeUndefined();
  });
});
