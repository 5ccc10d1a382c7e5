import type { ApiClient, ExecutionRequest, ExecutionRequestStatus, PaymentReceipt } from '../../../api/v1alpha1/index.ts';
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
      method: 'proof',
      txHash: `0x${'22'.repeat(32)}`,
      token: 'USDC',
      payer: `0x${'33'.repeat(20)}`,
      amountRaw: '1000000',
      apiClient: 'client-a',
      requestId: 'req-1',
    },
  };
}

const hex = (bytes: number, seed: number): `0x${string}` => {
  let out = '';
  for (let i = 0; out.length < bytes * 2; i++) out += ((seed * 2654435761 + i * 40503) >>> 0).toString(16).padStart(8, '0');
  return `0x${out.slice(0, bytes * 2)}`;
};

/**
 * An ExecutionRequest as the gateway creates it and the three status writes the execution reconciler makes
 * for a sponsored request that confirms (Queued with the signed UserOperation, Broadcasting, Confirmed): the
 * sequence of writes one request costs the store, with fields of realistic size.
 */
export function requestLifecycle(i: number, namespace = 'default'): { created: ExecutionRequest; statuses: ExecutionRequestStatus[] } {
  const t0 = Date.UTC(2026, 10, 21, 12, 0, 0) + i * 4;
  const at = (ms: number) => new Date(t0 + ms).toISOString();
  const name = `req-01jd${String(i).padStart(22, '0')}`.toLowerCase();
  const created: ExecutionRequest = {
    apiVersion: API_VERSION,
    kind: 'ExecutionRequest',
    metadata: {
      name,
      namespace,
      labels: {
        'agentwallet.dev/api-client': 'client-a',
        'agentwallet.dev/chain': 'base',
        'agentwallet.dev/agent-hash': hex(8, i % 50).slice(2),
      },
      annotations: {
        'agentwallet.dev/accepted': name,
        'agentwallet.dev/idempotency-body-sha256': hex(32, i).slice(2),
      },
    },
    spec: {
      apiClient: 'client-a',
      agentId: `agent-${i % 50}`,
      chain: 'base',
      calls: [{ target: hex(20, 7), value: '0', data: '0xd09de08a' }],
      batch: false,
      paymentMode: 'sponsored',
    },
  };
  const condition = (type: string, status: 'True' | 'False' | 'Unknown', reason: string, message: string, ms: number) => ({
    type,
    status,
    reason,
    message,
    lastTransitionTime: at(ms),
  });
  const queued: ExecutionRequestStatus = {
    phase: 'Queued',
    observedGeneration: 1,
    conditions: [
      condition('Simulated', 'True', 'SimulationSucceeded', '', 3),
      condition('PaymentSatisfied', 'True', 'Sponsored', '', 3),
      condition('Submitted', 'Unknown', 'Signed', `nonce ${i}`, 3),
      condition('Succeeded', 'Unknown', 'Queued', '', 3),
    ],
    smartWalletAddress: hex(20, i % 50),
    estimatedGas: 118_563,
    estimatedCostUsd: 0,
    userOperation: {
      sender: hex(20, i % 50),
      nonce: String(i),
      // SimpleAccount.execute(target, value, data) with a 4-byte call.
      callData: hex(4 + 32 * 4 + 32, i),
      callGasLimit: '41386',
      verificationGasLimit: '70000',
      preVerificationGas: '48217',
      maxFeePerGas: '2000001962',
      maxPriorityFeePerGas: '2000000000',
      paymaster: hex(20, 9),
      paymasterVerificationGasLimit: '45000',
      paymasterPostOpGasLimit: '1',
      // VerifyingPaymaster: validUntil, validAfter (ABI words) and a 65-byte signature.
      paymasterData: hex(64 + 65, i + 1),
      signature: hex(65, i + 2),
      hash: hex(32, i + 3),
      entryPoint: '0x0000000071727De22E5E9d8BAf0edAc6f37da032',
      chainId: 84532,
    },
    costUsd: 0,
    startTime: at(3),
    queuedTime: at(3),
  };
  const broadcasting: ExecutionRequestStatus = {
    ...queued,
    phase: 'Broadcasting',
    submitAttempts: 1,
    conditions: queued.conditions!.map((c) =>
      c.type === 'Submitted'
        ? condition('Submitted', 'True', 'BundlerAccepted', '', 5)
        : c.type === 'Succeeded'
          ? { ...c, reason: 'Broadcasting' }
          : c,
    ),
  };
  const confirmed: ExecutionRequestStatus = {
    ...broadcasting,
    phase: 'Confirmed',
    txHash: hex(32, i + 4),
    blockNumber: String(18_000_000 + i),
    gasUsed: '104871',
    actualGasCostWei: '209742205755102',
    completionTime: at(12),
    conditions: broadcasting.conditions!.map((c) =>
      c.type === 'Succeeded' ? condition('Succeeded', 'True', 'Confirmed', `included in block ${18_000_000 + i}`, 12) : c,
    ),
  };
  return { created, statuses: [queued, broadcasting, confirmed] };
}
