/**
 * Request traces in the embedded layout (src/lib/tracing.ts): with tracing on, one execute is one trace from the
 * gateway's HTTP in through admission, signing, the bundle and the Confirmed status write, each span child of the
 * step that caused it; with tracing off, no trace reaches the request or the collector. The cluster layout, where
 * the same trace crosses processes: test/cluster/traces.test.ts.
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { encodeFunctionData } from 'viem';
import { counterAbi } from '../../src/devnet/contracts.ts';
import { flushTracing, startTracing, stopTracing, TRACEPARENT_ANNOTATION, TRACERS } from '../../src/lib/tracing.ts';
import { startOtlpReceiver, type OtlpReceiver } from '../support/otlpReceiver.ts';
import { startTestService, type TestService } from '../support/service.ts';
import { requestTrace } from '../support/traces.ts';

let receiver: OtlpReceiver;
let service: TestService;
beforeAll(async () => {
  receiver = await startOtlpReceiver();
  // On before the service starts, as a role does (its controller wraps the worker calls and status writes then).
  await startTracing({ url: receiver.url, serviceName: 'agent-wallet-embedded', exportDelayMs: 200 });
  service = await startTestService();
});
afterAll(async () => {
  await service?.stop();
  await stopTracing();
  await receiver?.close();
});

const execute = (api: Awaited<ReturnType<TestService['newKey']>>['api'], agent: string) =>
  api.post('/execute', {
    agent_id: agent,
    chain: 'base',
    target_contract: service.devnet.chain('base').testContracts.counter,
    calldata: encodeFunctionData({ abi: counterAbi, functionName: 'increment' }),
    value: '0',
  });

describe('request traces, embedded', () => {
  it('one execute is one trace: gateway, controller and bundler spans, each the child of the step that caused it', async () => {
    const { api } = await service.newKey();
    const res = await execute(api, 'traced');
    expect(res.status).toBe(200);
    expect((await api.waitForTerminal(res.body.request_id)).status).toBe('confirmed');
    await flushTracing();
    const { traceId, spans, one } = await requestTrace(receiver, service.store, res.body.request_id);

    const root = one('execute');
    expect(root).toMatchObject({ traceId, parentSpanId: undefined, scope: TRACERS.gateway, service: 'agent-wallet-embedded' });
    expect(root.attributes['http.response.status_code']).toBe(200);
    expect(one('store.create').parentSpanId).toBe(root.spanId);
    // The controller continues the trace the annotation carries: its first reconcile, and the wait before it.
    const reconcile = one('reconcile New');
    expect(reconcile).toMatchObject({ parentSpanId: root.spanId, scope: TRACERS.controller });
    expect(one('queue').parentSpanId).toBe(root.spanId);
    expect(one('admission.simulation').parentSpanId).toBe(reconcile.spanId);
    expect(one('worker.simulate').parentSpanId).toBe(one('admission.simulation').spanId);
    expect(one('worker.sign').parentSpanId).toBe(reconcile.spanId);
    expect(one('status Queued').parentSpanId).toBe(reconcile.spanId);
    // The bundler's spans are children of the submit that handed it the operation: right after the Queued write,
    // in the same reconcile (phases/sign.ts → submit.ts handOn).
    const submit = one('worker.submit');
    expect(submit.parentSpanId).toBe(reconcile.spanId);
    expect(one('bundle.wait')).toMatchObject({ parentSpanId: submit.spanId, scope: TRACERS.chainWorker });
    expect(one('bundle.send')).toMatchObject({ parentSpanId: submit.spanId, scope: TRACERS.chainWorker });
    expect(one('bundle.send').attributes['agentwallet.bundle.result']).toBe('success');
    // Written by the reconcile the worker's pushed outcome started: from Queued when it came within
    // broadcastingAfterMs (the devnet mines at once), from Broadcasting on a machine slow enough to pass it.
    expect(['reconcile Queued', 'reconcile Broadcasting']).toContain(spans.find((s) => s.spanId === one('status Confirmed').parentSpanId)?.name);
    // The timeline in order: created, queued, signed, sent in a bundle, mined, then written Confirmed.
    expect(one('queue').startMs).toBeLessThanOrEqual(reconcile.startMs);
    expect(one('status Queued').endMs).toBeLessThanOrEqual(one('bundle.wait').startMs);
    expect(one('bundle.wait').endMs).toBeLessThanOrEqual(one('bundle.send').startMs);
    expect(one('bundle.send').endMs).toBeLessThanOrEqual(one('status Confirmed').endMs);
  });

  it('with tracing off, a request carries no trace and the collector hears nothing more', async () => {
    await flushTracing();
    await stopTracing();
    const before = receiver.requests;
    const { api } = await service.newKey();
    const res = await execute(api, 'untraced');
    expect(res.status).toBe(200);
    expect((await api.waitForTerminal(res.body.request_id)).status).toBe('confirmed');
    const req = await service.store.get('ExecutionRequest', res.body.request_id);
    expect(req.metadata.annotations?.[TRACEPARENT_ANNOTATION]).toBeUndefined();
    await new Promise((r) => setTimeout(r, 500)); // longer than the export delay: a batch would have been sent
    expect(receiver.requests).toBe(before);
  });
});
