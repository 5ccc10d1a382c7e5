import { rmSync } from 'node:fs';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { encodeFunctionData } from 'viem';
import type { FastifyInstance } from 'fastify';
import { createChainWorker, type LocalChainWorker } from '../chain/worker/index.ts';
import { startExecutionController, type ExecutionController } from '../controller/execution/controller.ts';
import { counterAbi } from '../devnet/contracts.ts';
import { buildGateway } from '../gateway/app.ts';
import { createKey } from '../keys/manage.ts';
import { createMemoryLockManager } from '../locks/memory.ts';
import { setUpPayments } from '../payments/setup.ts';
import { pino } from 'pino';
import { openEmbeddedStore, type EmbeddedStore } from '../store/embedded/index.ts';
import { newServiceSecret, tempDir, testDevnet } from '../../test/support/env.ts';
import { apiClient } from '../../test/support/http.ts';
import { bundleObserver } from './bundler.ts';
import { instrumentLockManager } from './locks.ts';
import { createMetrics } from './registry.ts';
import { parseExposition, type Exposition } from './testing/exposition.ts';

/**
 * The embedded layout with metrics, in this process: a chain worker (instrumented locks, bundle observer), the execution
 * controller and the gateway on one Metrics, `/metrics` served by the gateway. Requests go through HTTP to
 * the devnet and back; the test reads what a Prometheus scrape of the gateway would.
 */
describe('metrics of a running service (devnet)', () => {
  const devnet = testDevnet();
  const config = devnet.chainConfigs().find((c) => c.name === 'base')!;
  const metrics = createMetrics();
  let store: EmbeddedStore;
  let worker: LocalChainWorker;
  let controller: ExecutionController;
  let app: FastifyInstance;
  let url = '';
  const dir = tempDir('aw-metrics-service-');

  beforeAll(async () => {
    store = await openEmbeddedStore({ dir, fsync: false });
    worker = await createChainWorker(config, {
      serviceSecret: newServiceSecret(),
      locks: instrumentLockManager(createMemoryLockManager(), metrics),
      bundleObserver: bundleObserver(metrics),
    });
    const workers = new Map([['base' as const, worker]]);
    const payments = setUpPayments({ store, namespace: 'default', chains: [config], logger: pino({ level: 'silent' }) });
    controller = await startExecutionController({ store, workers, payments: payments.policies, metrics });
    app = await buildGateway({ store, workers, payments, metrics, serveMetrics: true, publicRateLimit: false });
    url = await app.listen({ port: 0, host: '127.0.0.1' });
  });
  afterAll(async () => {
    await app?.close();
    await controller?.stop();
    await worker?.close();
    await store?.close();
    rmSync(dir, { recursive: true, force: true });
  });

  const scrape = async (): Promise<Exposition> => {
    const res = await fetch(`${url}/metrics`);
    expect(res.status).toBe(200);
    expect(res.headers.get('content-type')).toBe('text/plain; version=0.0.4; charset=utf-8');
    return parseExposition(await res.text());
  };

  it('reports a request’s way through every phase, the HTTP calls by route, the reconciles and the lock waits', async () => {
    const { api_key } = await createKey(store, { mode: 'sponsored', requestsPerSecond: 1_000, burst: 1_000 });
    const api = apiClient(url, api_key);
    const body = (agent: string) => ({
      agent_id: agent,
      chain: 'base',
      target_contract: devnet.chain('base').testContracts.counter,
      calldata: encodeFunctionData({ abi: counterAbi, functionName: 'increment' }),
      value: '0',
    });
    const ids: string[] = [];
    for (const agent of ['metrics-a', 'metrics-b', 'metrics-a']) {
      const res = await api.post('/execute', body(agent));
      expect(res.status).toBe(200);
      ids.push(res.body.request_id);
    }
    for (const id of ids) expect((await api.waitForTerminal(id)).status).toBe('confirmed');
    for (let i = 0; i < 10; i++) expect((await api.get(`/status/req-does-not-exist-${i}`)).status).toBe(404);
    expect((await api.get('/no/such/route')).status).toBe(404);
    await new Promise((r) => setTimeout(r, 50)); // the informer has seen the last writes

    const e = await scrape();
    const base = { chain: 'base' };
    expect(e.value('agentwallet_execution_requests', { ...base, phase: 'Confirmed' })).toBe(3);
    expect(e.value('agentwallet_execution_requests', { ...base, phase: 'Pending' })).toBe(0);
    for (const phase of ['Pending', 'Queued', 'Broadcasting']) {
      expect(e.value('agentwallet_execution_phase_duration_seconds_count', { ...base, phase })).toBe(3);
    }
    expect(e.value('agentwallet_execution_duration_seconds_count', { ...base, outcome: 'Confirmed' })).toBe(3);
    expect(e.value('agentwallet_execution_duration_seconds_sum', { ...base, outcome: 'Confirmed' })).toBeGreaterThan(0);

    const http = (route: string, method: string, status: string) => e.value('agentwallet_http_requests_total', { route, method, status });
    expect(http('/execute', 'POST', '200')).toBe(3);
    expect(http('/status/:id', 'GET', '404')).toBe(10); // the pattern: ten ids, one series
    expect(http('unmatched', 'GET', '404')).toBe(1);
    expect(e.find('agentwallet_http_requests_total').every((s) => !s.labels.route!.includes('req-'))).toBe(true);
    expect(e.value('agentwallet_http_request_duration_seconds_count', { route: '/execute', method: 'POST' })).toBe(3);

    const execution = { controller: 'execution' };
    expect(e.value('agentwallet_reconcile_total', { ...execution, result: 'success' })).toBeGreaterThanOrEqual(6); // admit and submit, per request
    expect(e.value('agentwallet_workqueue_adds_total', execution)).toBeGreaterThanOrEqual(3);
    expect(e.value('agentwallet_workqueue_depth', execution)).toBe(0);
    expect(e.value('agentwallet_lock_wait_seconds_count', { lock: 'nonce' })).toBe(3); // one nonce allocation per request
    expect(e.value('agentwallet_lock_wait_seconds_count', { lock: 'executor' })).toBeGreaterThanOrEqual(1);
    expect(e.value('agentwallet_bundles_total', { ...base, result: 'included' })).toBeGreaterThanOrEqual(1);
    expect(e.value('agentwallet_bundle_operations_sum', base)).toBe(3);
    expect(e.types.get('process_cpu_seconds_total')).toBe('counter');
  });

  it('keeps /metrics out of the OpenAPI document, and the scrape itself is counted by its route', async () => {
    const doc = (await (await fetch(`${url}/openapi.json`)).json()) as { paths: Record<string, unknown> };
    expect(Object.keys(doc.paths)).not.toContain('/metrics');
    expect(Object.keys(doc.paths)).toContain('/execute');
    await scrape();
    const e = await scrape();
    expect(e.value('agentwallet_http_requests_total', { route: '/metrics', method: 'GET', status: '200' })).toBeGreaterThanOrEqual(2);
    const post = await fetch(`${url}/metrics`, { method: 'POST' });
    expect(post.status).toBe(405);
  });
});
