import type { ApiClient, ExecutionRequest, PaymentReceipt } from '../../../api/v1alpha1/index.ts';
import { API_VERSION } from '../../../api/v1alpha1/index.ts';

/**
 * Small valid objects of each kind, for the stores' tests (the conformance suite included), benchmarks and
 * crash harness. The namespace defaults to the embedded store's default one.
 */
export interface FixtureOptions {
  labels?: Record<string, string>;
  namespace?: string;
}

const metadata = (name: string, opts: FixtureOptions) => ({
  name,
  namespace: opts.namespace ?? 'default',
  ...(opts.labels ? { labels: opts.labels } : {}),
});

export function apiClient(name: string, opts: FixtureOptions = {}): ApiClient {
  return {
    apiVersion: API_VERSION,
    kind: 'ApiClient',
    metadata: metadata(name, opts),
    spec: {
      keyHash: 'ab'.repeat(32),
      paymentMode: 'sponsored',
      enabled: true,
      limits: { requestsPerSecond: 50, burst: 100, maxBatchCalls: 20 },
    },
  };
}

export function executionRequest(name: string, opts: FixtureOptions = {}): ExecutionRequest {
  return {
    apiVersion: API_VERSION,
    kind: 'ExecutionRequest',
    metadata: metadata(name, opts),
    spec: {
      apiClient: 'client-a',
      agentId: 'agent-1',
      chain: 'base',
      calls: [{ target: `0x${'11'.repeat(20)}`, value: '0', data: '0xdeadbeef' }],
      batch: false,
      paymentMode: 'sponsored',
    },
  };
}

export function paymentReceipt(name: string, opts: FixtureOptions = {}): PaymentReceipt {
  return {
    apiVersion: API_VERSION,
    kind: 'PaymentReceipt',
    metadata: metadata(name, opts),
    spec: {
      chain: 'base',
      txHash: `0x${'22'.repeat(32)}`,
      token: 'USDC',
      payer: `0x${'33'.repeat(20)}`,
      amountRaw: '1000000',
      apiClient: 'client-a',
      requestId: 'req-1',
    },
  };
}
