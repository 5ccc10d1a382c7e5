/**
 * Request traces across the cluster layout's processes (src/lib/tracing.ts): the roles started with
 * OTEL_EXPORTER_OTLP_ENDPOINT (what the chart's tracing.enabled sets) send their spans to a receiver in this process;
 * one execute is one trace holding spans of the gateway, the controller and the chain worker, linked through the
 * ExecutionRequest's traceparent annotation and the gRPC metadata.
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { encodeFunctionData } from 'viem';
import { counterAbi } from '../../src/devnet/contracts.ts';
import { startOtlpReceiver, type OtlpReceiver } from '../support/otlpReceiver.ts';
import { startTestCluster, type TestCluster } from '../support/cluster.ts';
import { requestTrace } from '../support/traces.ts';

let receiver: OtlpReceiver;
let cluster: TestCluster;
beforeAll(async () => {
  receiver = await startOtlpReceiver();
  // Every role process inherits this environment (test/support/cluster.ts), as the chart gives it to every pod.
  process.env.OTEL_EXPORTER_OTLP_ENDPOINT = receiver.endpoint;
  try {
    cluster = await startTestCluster();
  } finally {
    delete process.env.OTEL_EXPORTER_OTLP_ENDPOINT;
  }
});
afterAll(async () => {
  await cluster?.stop();
  await receiver?.close();
});

describe('request traces, cluster layout', () => {
  it('one execute is one trace across the gateway, controller and chain worker processes', async () => {
    const { api } = await cluster.newKey();
    const res = await api.post('/execute', {
      agent_id: 'traced',
      chain: 'base',
      target_contract: cluster.devnet.chain('base').testContracts.counter,
      calldata: encodeFunctionData({ abi: counterAbi, functionName: 'increment' }),
      value: '0',
    });
    expect(res.status).toBe(200);
    expect((await api.waitForTerminal(res.body.request_id)).status).toBe('confirmed');
    const { traceId, spans, one } = await requestTrace(receiver, cluster.store, res.body.request_id, cluster.namespace, [
      'execute',
      'reconcile New',
      'worker.submit',
      'chainworker.SubmitOperation',
      'bundle.send',
      'status Confirmed',
    ]);

    expect(new Set(spans.map((s) => s.service))).toEqual(new Set(['agent-wallet-gateway', 'agent-wallet-controller', 'agent-wallet-chain-worker']));
    const root = one('execute');
    expect(root).toMatchObject({ traceId, parentSpanId: undefined, service: 'agent-wallet-gateway' });
    // Gateway → controller through the ExecutionRequest's annotation.
    expect(one('reconcile New')).toMatchObject({ parentSpanId: root.spanId, service: 'agent-wallet-controller' });
    // Controller → chain worker through the gRPC metadata, and on to the bundle that carried the operation.
    const submit = one('worker.submit');
    const served = one('chainworker.SubmitOperation');
    expect(served).toMatchObject({ parentSpanId: submit.spanId, service: 'agent-wallet-chain-worker' });
    expect(one('bundle.send')).toMatchObject({ parentSpanId: served.spanId, service: 'agent-wallet-chain-worker' });
    // Signing: one call, or two when the worker first asked to hear the operations in flight (restorer.ts).
    const prepares = spans.filter((s) => s.name === 'chainworker.PrepareOperation');
    expect(prepares.length).toBeGreaterThanOrEqual(1);
    expect(new Set(prepares.map((s) => s.parentSpanId))).toEqual(new Set([one('worker.sign').spanId]));
    expect(one('status Confirmed').service).toBe('agent-wallet-controller');
  });
});
