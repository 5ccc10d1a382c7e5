import { API_VERSION, type AgentPolicy, type AgentPolicySpec, type ExecutionRequest, type ExecutionRequestStatus } from '../../api/v1alpha1/index.ts';

/** Policies, reservations and requests for the budget tests (src/policy/budgets.ts, the controller's spend ledger). */
export const policy = (name: string, spec: Partial<AgentPolicySpec>): AgentPolicy => ({
  apiVersion: API_VERSION,
  kind: 'AgentPolicy',
  metadata: { name, namespace: 'default' },
  spec: { apiClient: 'key-1', suspended: false, rules: [], ...spec },
});
export const T0 = Date.parse('2026-11-26T12:00:00Z');
export const spend = (atMs: number, microUsd: bigint) => ({
  at: new Date(atMs).toISOString(),
  microUsd: microUsd.toString(),
  outflowsMicroUsd: '0',
  nativeUsdMicro: '3000000000',
  until: new Date(atMs + 86_400_000).toISOString(),
});
export const request = (name: string, agentId: string, status?: ExecutionRequestStatus): ExecutionRequest => ({
  apiVersion: API_VERSION,
  kind: 'ExecutionRequest',
  metadata: { name, namespace: 'default' },
  spec: { apiClient: 'key-1', agentId, chain: 'base', calls: [{ target: '0x0000000000000000000000000000000000000001', data: '0x', value: '0' }], paymentMode: 'sponsored' },
  ...(status && { status }),
} as ExecutionRequest);

