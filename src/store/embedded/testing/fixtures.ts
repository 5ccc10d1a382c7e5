import type { ApiClient, ExecutionRequest, PaymentReceipt } from '../../../api/v1alpha1/index.ts';
import { API_VERSION } from '../../../api/v1alpha1/index.ts';

/** Small valid objects of each kind, for the store's tests, benchmarks and crash harness. */
export function apiClient(name: string, opts: { labels?: Record<string, string>; namespace?: string } = {}): ApiClient {
  return {
    apiVersion: API_VERSION,
    kind: 'ApiClient',
    metadata: {
      name,
      namespace: opts.namespace ?? 'default',
      ...(opts.labels ? { labels: opts.labels } : {}),
    },
    spec: {
      keyHash: 'ab'.repeat(32),
      paymentMode: 'sponsored',
      enabled: true,
      limits: { requestsPerSecond: 50, burst: 100, maxBatchCalls: 20 },
    },
  };
}

export function executionRequest(name: string, labels?: Record<string, string>): ExecutionRequest {
  return {
    apiVersion: API_VERSION,
    kind: 'ExecutionRequest',
    metadata: { name, namespace: 'default', ...(labels ? { labels } : {}) },
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

export function paymentReceipt(name: string): PaymentReceipt {
  return {
    apiVersion: API_VERSION,
    kind: 'PaymentReceipt',
    metadata: { name, namespace: 'default' },
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
