/**
 * Test code: objects to judge with both zod and the CRD schemas. Valid ones look like what the service writes
 * (an ExecutionRequest at every phase, as the execution controller leaves it); invalid ones each break one rule
 * of a valid one, so a verdict that differs points at one keyword.
 */
import type { AgentPolicy, ApiClient, ExecutionRequest, Kind, PaymentReceipt } from '../../index.ts';
import { API_VERSION } from '../../meta.ts';

export interface Case {
  name: string;
  kind: Kind;
  object: unknown;
}

const addr = (b: string) => `0x${b.repeat(20)}`;
const hash = (b: string) => `0x${b.repeat(32)}`;
const T0 = '2025-11-21T12:00:00.000Z';
const T1 = '2025-11-21T12:00:01.000Z';
const T2 = '2025-11-21T12:00:03.000Z';

const metadata = {
  name: 'exr-01jd0000000000000000000000',
  namespace: 'agents',
  uid: '5b0c6a4e-3f7e-4c1a-9d8e-1f2a3b4c5d6e',
  resourceVersion: '48213',
  generation: 1,
  creationTimestamp: '2025-11-21T12:00:00Z',
  labels: { 'agentwallet.dev/api-client': 'c0ffee01', 'agentwallet.dev/chain': 'base', 'agentwallet.dev/phase': 'Queued' },
  annotations: { 'agentwallet.dev/idempotency-key': 'order-17' },
};

const spec: ExecutionRequest['spec'] = {
  apiClient: 'c0ffee01',
  agentId: 'agent-7',
  chain: 'base',
  calls: [{ target: addr('11'), value: '0', data: '0xd09de08a' }],
  // A protocol action's input is free-form JSON the API server keeps as it is (preserve-unknown-fields).
  action: {
    name: 'lend-b-v3/borrow',
    input: { agent_id: 'agent-7', chain: 'base', market: 'cUSDCv3', amount: '1000', nested: { deadline: '1767225600', path: ['USDC', 'WETH'] } },
    inputHash: 'ef'.repeat(32),
  },
  batch: false,
  paymentMode: 'sponsored',
};

const batchSpec: ExecutionRequest['spec'] = {
  ...spec,
  chain: 'arbitrum',
  batch: true,
  strategyId: 'rebalance-v2',
  callbackUrl: 'https://agent.example/hooks/agent-wallet',
  paymentMode: 'manual',
  calls: [
    { target: addr('11'), value: '1000000000000000000', data: '0x' },
    { target: addr('22'), value: '0', data: `0xa9059cbb${'00'.repeat(64)}` },
  ],
  paymentProof: { requestId: 'exr-01jd0000000000000000000000', payer: addr('33'), token: 'USDC', chain: 'base', txHash: hash('44') },
};

const cond = (type: string, status: 'True' | 'False' | 'Unknown', reason: string, message = '') => ({
  type, status, reason, message, lastTransitionTime: T1, observedGeneration: 1,
});

const userOperation = {
  sender: addr('55'),
  nonce: '18446744073709551616', // key 1, sequence 0: above 2^64, a uint256 only a string holds
  factory: addr('66'),
  factoryData: '0x5fbfb9cf0000',
  callData: '0xb61d27f6',
  callGasLimit: '52000',
  verificationGasLimit: '310000',
  preVerificationGas: '48000',
  maxFeePerGas: '1500000000',
  maxPriorityFeePerGas: '1000000',
  paymaster: addr('77'),
  paymasterVerificationGasLimit: '60000',
  paymasterPostOpGasLimit: '0',
  paymasterData: '0x',
  signature: `0x${'ab'.repeat(65)}`,
  hash: hash('88'),
  entryPoint: '0x0000000071727De22E5E9d8BAf0edAc6f37da032',
  chainId: 84532,
};

type Status = NonNullable<ExecutionRequest['status']>;
const simulated: Status = {
  observedGeneration: 1,
  smartWalletAddress: addr('55'),
  estimatedGas: 410000,
  startTime: T0,
};

const QUOTE = {
      amountUsd: 0.0125,
      gasCostUsd: 0.0025,
      feeUsd: 0.01,
      chainId: 84532,
      recipient: `0x${'77'.repeat(20)}`,
      tokens: [{ symbol: 'USDC', address: `0x${'11'.repeat(20)}`, decimals: 6, amountRaw: '12500' }],
      expiresAt: '2030-01-01T00:10:00Z',
    };

/** Status as the controller leaves it at each phase. */
const STATUS_BY_PHASE: Record<string, Status> = {
  Pending: { phase: 'Pending' },
  PaymentRequired: {
    ...simulated,
    phase: 'PaymentRequired',
    estimatedCostUsd: 0.0125,
    payment: { quote: QUOTE },
    conditions: [
      cond('Simulated', 'True', 'SimulationSucceeded'),
      cond('PaymentSatisfied', 'False', 'PaymentRequired', 'pay 0.0125 USD'),
      cond('Succeeded', 'Unknown', 'AwaitingPayment'),
    ],
  },
  PaymentVerified: {
    ...simulated,
    phase: 'PaymentVerified',
    payment: {
      quote: QUOTE,
      paid: { method: 'proof', token: 'USDC', amountRaw: '12500', payer: `0x${'99'.repeat(20)}`, txHash: `0x${'44'.repeat(32)}`, receipt: `base-${'44'.repeat(32)}` },
    },
    conditions: [cond('PaymentSatisfied', 'True', 'PaymentVerified'), cond('Succeeded', 'Unknown', 'PaymentVerified')],
  },
  Queued: {
    ...simulated,
    phase: 'Queued',
    estimatedCostUsd: 0,
    costUsd: 0,
    userOperation,
    queuedTime: T1,
    conditions: [cond('Submitted', 'Unknown', 'Signed', 'nonce 18446744073709551616'), cond('Succeeded', 'Unknown', 'Queued')],
  },
  Broadcasting: {
    ...simulated,
    phase: 'Broadcasting',
    userOperation,
    submitAttempts: 1,
    conditions: [cond('Submitted', 'True', 'BundlerAccepted'), cond('Succeeded', 'Unknown', 'Broadcasting')],
  },
  Confirmed: {
    ...simulated,
    phase: 'Confirmed',
    userOperation,
    submitAttempts: 2,
    costUsd: 0,
    txHash: hash('99'),
    blockNumber: '1234567',
    gasUsed: '187654',
    actualGasCostWei: '281481000000000',
    completionTime: T2,
    webhookEvents: [
      {
        id: 'evt_req-confirmed',
        event: 'execution.confirmed',
        time: T2,
        body: '{"id":"evt_req-confirmed","type":"execution.confirmed","version":1}',
        state: 'Delivered',
        attempts: 2,
        firstAttemptTime: T2,
        lastAttemptTime: T2,
        lastResponseCode: 200,
        lastFailure: { cause: 'server_error', message: 'HTTP 503' },
        deliveredTime: T2,
      },
    ],
    conditions: [cond('Succeeded', 'True', 'Confirmed', 'included in block 1234567')],
  },
  Reverted: {
    ...simulated,
    phase: 'Reverted',
    userOperation,
    txHash: hash('99'),
    blockNumber: '1234568',
    gasUsed: '90000',
    actualGasCostWei: '135000000000000',
    completionTime: T2,
    failure: { code: 'execution_reverted', message: 'Counter: too high', revertReason: 'Counter: too high', revertData: '0x08c379a0' },
    conditions: [cond('Succeeded', 'False', 'Reverted', 'Counter: too high')],
  },
  Failed: {
    phase: 'Failed',
    startTime: T0,
    completionTime: T1,
    failure: {
      code: 'simulation_reverted',
      message: 'execution reverted',
      revertData: '0xe273b446',
      protocolError: { protocol: 'Compound v3', name: 'NotCollateralized', message: 'the borrow is not covered by collateral' },
    },
    conditions: [
      cond('Simulated', 'False', 'SimulationReverted', 'execution reverted'),
      cond('Succeeded', 'False', 'SimulationReverted', 'execution reverted'),
    ],
  },
};

const exr = (s: ExecutionRequest['spec'], status?: Status): ExecutionRequest => ({
  apiVersion: API_VERSION,
  kind: 'ExecutionRequest',
  metadata,
  spec: s,
  ...(status && { status }),
});

const apiClient: ApiClient = {
  apiVersion: API_VERSION,
  kind: 'ApiClient',
  metadata: { name: 'c0ffee01', namespace: 'agents', creationTimestamp: '2025-11-20T09:00:00Z' },
  spec: {
    displayName: 'trading agents',
    keyHash: 'ab'.repeat(32),
    paymentMode: 'auto',
    enabled: true,
    limits: { requestsPerSecond: 12.5, burst: 25, maxBatchCalls: 10 },
  },
  status: { rotatedAt: '2025-11-21T08:00:00.000Z' },
};

const receipt: PaymentReceipt = {
  apiVersion: API_VERSION,
  kind: 'PaymentReceipt',
  metadata: { name: `base-${'44'.repeat(32)}`, namespace: 'agents' },
  spec: {
    chain: 'base',
    method: 'proof',
    txHash: hash('44'),
    token: 'USDC',
    payer: addr('33'),
    amountRaw: '12500',
    apiClient: 'c0ffee01',
    requestId: 'exr-01jd0000000000000000000000',
  },
};

const policy: AgentPolicy = {
  apiVersion: API_VERSION,
  kind: 'AgentPolicy',
  metadata: { name: 'c0ffee01-traders', namespace: 'agents' },
  spec: {
    apiClient: 'c0ffee01',
    agents: { match: 'prefix', agentId: 'traders/' },
    suspended: false,
    validUntil: '2030-01-01T00:00:00Z',
    rules: [
      { name: 'base-only', action: 'accept', chains: ['base'], protocol: { actions: ['pool-a-v3/*'], input: [{ field: 'slippage_bps', lte: '100' }] } },
      { name: 'usdc-transfers', action: 'accept', targets: [addr('11')], function: { signature: 'transfer(address to, uint256 amount)', args: [{ field: 'amount', lte: '1000000' }] } },
      { name: 'no-approvals', action: 'reject', approval: { spendersNot: [addr('22')] } },
      { name: 'small-value', action: 'accept', selectors: ['0x'], value: { lte: '1000000000000000' } },
    ],
  },
};

/** A deep copy of `base` with the value at `path` replaced, or removed when `value` is DELETE. */
export const DELETE = Symbol('delete');
export function withValue(base: unknown, path: (string | number)[], value: unknown): unknown {
  const copy = structuredClone(base) as Record<string | number, unknown>;
  let node = copy;
  for (const key of path.slice(0, -1)) node = node[key] as Record<string | number, unknown>;
  const last = path[path.length - 1]!;
  if (value === DELETE) delete node[last];
  else node[last] = value;
  return copy;
}

const confirmed = exr(spec, STATUS_BY_PHASE.Confirmed);
/** Stored before events were a list: its one delivery in status.webhook. */
const { webhookEvents: _events, ...confirmedStatus } = STATUS_BY_PHASE.Confirmed!;
const confirmedLegacy = exr(spec, {
  ...confirmedStatus,
  webhook: { id: 'evt_req-confirmed', event: 'execution.confirmed', state: 'Retrying', attempts: 1, firstAttemptTime: T2, lastAttemptTime: T2, nextAttemptTime: T2 },
});
/** Confirmed, then its inclusion left the chain: sent again, with the change and the two events recorded. */
const reopened = exr(spec, {
  ...STATUS_BY_PHASE.Broadcasting,
  inclusionChanges: [{ kind: 'Lost', txHash: hash('99'), blockNumber: '1234567', blockHash: hash('98'), phase: 'Confirmed', time: T2 }],
  webhookEvents: [
    ...(STATUS_BY_PHASE.Confirmed!.webhookEvents ?? []),
    { id: 'evt_req-confirmed_2', event: 'execution.inclusion_lost', time: T2, body: '{}', attempts: 0 },
  ],
});
const queued = exr(spec, STATUS_BY_PHASE.Queued);
const batch = exr(batchSpec, STATUS_BY_PHASE.PaymentRequired);

/** Objects both zod and the API server accept, and store the same way. */
export function validCases(): Case[] {
  const cases: Case[] = [
    { name: 'ExecutionRequest just created (no status)', kind: 'ExecutionRequest', object: exr(spec) },
    ...Object.entries(STATUS_BY_PHASE).map(([phase, status]): Case => ({
      name: `ExecutionRequest at ${phase}`,
      kind: 'ExecutionRequest',
      object: exr(phase === 'PaymentRequired' || phase === 'PaymentVerified' ? batchSpec : spec, status),
    })),
    { name: 'ExecutionRequest stored before events were a list (status.webhook)', kind: 'ExecutionRequest', object: confirmedLegacy },
    { name: 'ExecutionRequest sent again after its inclusion was lost', kind: 'ExecutionRequest', object: reopened },
    { name: 'ExecutionRequest without batch (defaulted)', kind: 'ExecutionRequest', object: withValue(exr(spec), ['spec', 'batch'], DELETE) },
    {
      name: 'ExecutionRequest condition without message (defaulted)',
      kind: 'ExecutionRequest',
      object: withValue(confirmed, ['status', 'conditions', 0, 'message'], DELETE),
    },
    { name: 'ExecutionRequest with an empty status', kind: 'ExecutionRequest', object: exr(spec, {}) },
    { name: 'ExecutionRequest with unknown spec field (stripped/pruned)', kind: 'ExecutionRequest', object: withValue(batch, ['spec', 'priority'], 'high') },
    { name: 'ExecutionRequest with unknown field in a call', kind: 'ExecutionRequest', object: withValue(batch, ['spec', 'calls', 1, 'gas'], 21000) },
    { name: 'ExecutionRequest with unknown status field', kind: 'ExecutionRequest', object: withValue(confirmed, ['status', 'retries'], 3) },
    { name: 'ExecutionRequest with unknown top-level field', kind: 'ExecutionRequest', object: withValue(confirmed, ['extra'], { a: 1 }) },
    { name: 'ExecutionRequest with negative estimatedGas (no bound in zod)', kind: 'ExecutionRequest', object: withValue(queued, ['status', 'estimatedGas'], -1) },
    { name: 'ExecutionRequest with the largest safe integer', kind: 'ExecutionRequest', object: withValue(queued, ['status', 'estimatedGas'], 2 ** 53 - 1) },
    { name: 'ExecutionRequest with non-ASCII agent id', kind: 'ExecutionRequest', object: withValue(exr(spec), ['spec', 'agentId'], 'agent-🤖') },
    { name: 'ApiClient', kind: 'ApiClient', object: apiClient },
    {
      name: 'ApiClient as kubectl would write it (defaults omitted)',
      kind: 'ApiClient',
      object: { ...apiClient, spec: { keyHash: 'cd'.repeat(32), paymentMode: 'sponsored' }, status: undefined },
    },
    { name: 'ApiClient with partial limits (inner defaults)', kind: 'ApiClient', object: withValue(apiClient, ['spec', 'limits'], { burst: 7 }) },
    { name: 'ApiClient revoked', kind: 'ApiClient', object: withValue(withValue(apiClient, ['spec', 'enabled'], false), ['status', 'revokedAt'], T2) },
    {
      name: 'ApiClient with a webhook secret in rotation',
      kind: 'ApiClient',
      object: withValue(apiClient, ['spec', 'webhookSigning'], {
        current: { secretRef: 'whsec-c0ffee01-0123456789abcdef', createdAt: T2 },
        previous: { secretRef: 'whsec-c0ffee01-fedcba9876543210', createdAt: T1, validUntil: T2 },
      }),
    },
    { name: 'ApiClient with fractional requestsPerSecond', kind: 'ApiClient', object: withValue(apiClient, ['spec', 'limits', 'requestsPerSecond'], 0.5) },
    { name: 'PaymentReceipt', kind: 'PaymentReceipt', object: receipt },
    { name: 'AgentPolicy', kind: 'AgentPolicy', object: policy },
    {
      name: 'AgentPolicy as kubectl would write it (defaults omitted)',
      kind: 'AgentPolicy',
      object: { ...policy, spec: { apiClient: 'c0ffee01', suspended: true } },
    },
    { name: 'PaymentReceipt with a free-form status (kept)', kind: 'PaymentReceipt', object: { ...receipt, status: { note: 'x', nested: { n: 1 } } } },
  ];
  return cases.map((c) => ({ ...c, object: dropUndefined(c.object) }));
}

/** Objects both refuse; each breaks one rule of a valid object. */
export function invalidCases(): Case[] {
  const er = (name: string, base: unknown, path: (string | number)[], value: unknown): Case => ({
    name: `ExecutionRequest: ${name}`,
    kind: 'ExecutionRequest',
    object: withValue(base, path, value),
  });
  const ac = (name: string, path: (string | number)[], value: unknown): Case => ({
    name: `ApiClient: ${name}`,
    kind: 'ApiClient',
    object: withValue(apiClient, path, value),
  });
  const pr = (name: string, path: (string | number)[], value: unknown): Case => ({
    name: `PaymentReceipt: ${name}`,
    kind: 'PaymentReceipt',
    object: withValue(receipt, path, value),
  });
  const ap = (name: string, path: (string | number)[], value: unknown): Case => ({
    name: `AgentPolicy: ${name}`,
    kind: 'AgentPolicy',
    object: withValue(policy, path, value),
  });
  return [
    ap('unknown rule action', ['spec', 'rules', 0, 'action'], 'allow'),
    ap('rule name with a space', ['spec', 'rules', 0, 'name'], 'base only'),
    ap('short selector', ['spec', 'rules', 3, 'selectors'], ['0xa905']),
    ap('value bound not a decimal integer', ['spec', 'rules', 3, 'value', 'lte'], '1e18'),
    ap('unknown chain', ['spec', 'rules', 0, 'chains'], ['polygon']),
    ap('protocol action without a family', ['spec', 'rules', 0, 'protocol', 'actions'], ['swap']),
    ap('no apiClient', ['spec', 'apiClient'], DELETE),
    er('no spec', confirmed, ['spec'], DELETE),
    er('spec is a string', confirmed, ['spec'], 'x'),
    er('unknown chain', confirmed, ['spec', 'chain'], 'polygon'),
    er('chain alias (only canonical names are stored)', confirmed, ['spec', 'chain'], 'eth'),
    er('unknown payment mode', confirmed, ['spec', 'paymentMode'], 'free'),
    er('unknown phase', confirmed, ['status', 'phase'], 'Done'),
    er('phase in snake_case', confirmed, ['status', 'phase'], 'payment_required'),
    er('missing agentId', confirmed, ['spec', 'agentId'], DELETE),
    er('empty agentId', confirmed, ['spec', 'agentId'], ''),
    er('missing apiClient', confirmed, ['spec', 'apiClient'], DELETE),
    er('no calls', confirmed, ['spec', 'calls'], []),
    er('calls is an object', confirmed, ['spec', 'calls'], { target: addr('11'), value: '0', data: '0x' }),
    er('short target address', confirmed, ['spec', 'calls', 0, 'target'], '0x1234'),
    er('target without 0x', confirmed, ['spec', 'calls', 0, 'target'], '11'.repeat(20)),
    er('value with a leading zero', confirmed, ['spec', 'calls', 0, 'value'], '01'),
    er('negative value', confirmed, ['spec', 'calls', 0, 'value'], '-1'),
    er('value as a number', confirmed, ['spec', 'calls', 0, 'value'], 0),
    er('odd-length calldata', confirmed, ['spec', 'calls', 0, 'data'], '0xabc'),
    er('call without data', confirmed, ['spec', 'calls', 0, 'data'], DELETE),
    er('batch as a string', confirmed, ['spec', 'batch'], 'yes'),
    er('paymentProof without payer', batch, ['spec', 'paymentProof', 'payer'], DELETE),
    er('paymentProof with a short tx hash', batch, ['spec', 'paymentProof', 'txHash'], '0x1234'),
    er('paymentProof on an unknown chain', batch, ['spec', 'paymentProof', 'chain'], 'solana'),
    er('fractional observedGeneration', confirmed, ['status', 'observedGeneration'], 1.5),
    er('observedGeneration as a string', confirmed, ['status', 'observedGeneration'], '1'),
    er('estimatedGas beyond 2^53', queued, ['status', 'estimatedGas'], 2 ** 53),
    er('estimatedCostUsd as a string', batch, ['status', 'estimatedCostUsd'], '0.01'),
    er('condition status Maybe', confirmed, ['status', 'conditions', 0, 'status'], 'Maybe'),
    er('condition status as a boolean', confirmed, ['status', 'conditions', 0, 'status'], true),
    er('condition without reason', confirmed, ['status', 'conditions', 0, 'reason'], DELETE),
    er('condition without lastTransitionTime', confirmed, ['status', 'conditions', 0, 'lastTransitionTime'], DELETE),
    er('conditions is an object', confirmed, ['status', 'conditions'], { Succeeded: 'True' }),
    er('userOperation without signature', queued, ['status', 'userOperation', 'signature'], DELETE),
    er('userOperation nonce in hex', queued, ['status', 'userOperation', 'nonce'], '0x1'),
    er('userOperation chainId as a string', queued, ['status', 'userOperation', 'chainId'], '84532'),
    er('payment quote without amountUsd', batch, ['status', 'payment', 'quote', 'amountUsd'], DELETE),
    er('tx hash with uppercase 0X', confirmed, ['status', 'txHash'], `0X${'99'.repeat(32)}`),
    er('failure without code', confirmed, ['status', 'failure'], { message: 'x' }),
    er('webhook event attempts fractional', confirmed, ['status', 'webhookEvents', 0, 'attempts'], 1.5),
    er('webhook event state unknown', confirmed, ['status', 'webhookEvents', 0, 'state'], 'Pending'),
    er('webhook event without id', confirmed, ['status', 'webhookEvents', 0, 'id'], DELETE),
    er('webhook event without body', confirmed, ['status', 'webhookEvents', 0, 'body'], DELETE),
    er('webhook events is an object', confirmed, ['status', 'webhookEvents'], { id: 'evt_x' }),
    er('legacy webhook attempts fractional', confirmedLegacy, ['status', 'webhook', 'attempts'], 1.5),
    er('legacy webhook without state', confirmedLegacy, ['status', 'webhook', 'state'], DELETE),
    er('inclusion change of an unknown kind', reopened, ['status', 'inclusionChanges', 0, 'kind'], 'Vanished'),
    er('inclusion change with a short tx hash', reopened, ['status', 'inclusionChanges', 0, 'txHash'], '0x99'),
    er('status is an array', confirmed, ['status'], []),
    ac('no keyHash', ['spec', 'keyHash'], DELETE),
    ac('keyHash in uppercase hex', ['spec', 'keyHash'], 'AB'.repeat(32)),
    ac('keyHash too short', ['spec', 'keyHash'], 'ab'),
    ac('unknown payment mode', ['spec', 'paymentMode'], 'prepaid'),
    ac('enabled as a string', ['spec', 'enabled'], 'true'),
    ac('zero requestsPerSecond', ['spec', 'limits', 'requestsPerSecond'], 0),
    ac('negative burst', ['spec', 'limits', 'burst'], -5),
    ac('zero maxBatchCalls', ['spec', 'limits', 'maxBatchCalls'], 0),
    ac('fractional burst', ['spec', 'limits', 'burst'], 2.5),
    ac('webhookSigning without current', ['spec', 'webhookSigning'], { previous: { secretRef: 'x', createdAt: T1, validUntil: T2 } }),
    ac('rotatedAt as a number', ['status', 'rotatedAt'], 1700000000),
    pr('unknown chain', ['spec', 'chain'], 'sepolia'),
    pr('short tx hash', ['spec', 'txHash'], '0x44'),
    pr('no requestId', ['spec', 'requestId'], DELETE),
    pr('amountRaw as a number', ['spec', 'amountRaw'], 12500),
    pr('status is a string', ['status'], 'settled'),
  ];
}

/**
 * Where the two cannot agree, each with the verdicts we expect, so a change on either side shows up:
 * - A null in a field that is not nullable: the server drops it (or puts the default in its place) before
 *   validating (prunenulls.go, algorithm.go); zod's optional() and default() take undefined, not null. The
 *   stored object then parses with zod, so the service still reads what the server keeps.
 * - callbackUrl: the CRD has no `format: uri` (structural.ts says why), so the server keeps any string there
 *   and zod refuses a non-URL when it reads it back. Only a hand-written ExecutionRequest can get there: the
 *   gateway validates callback URLs more strictly than both.
 */
export interface Disagreement extends Case {
  zod: boolean;
  server: boolean;
  /** Whether zod accepts what the server stored. */
  zodReadsStored: boolean;
}

export function disagreements(): Disagreement[] {
  return [
    { name: 'null optional field', kind: 'ExecutionRequest', object: withValue(batch, ['spec', 'strategyId'], null), zod: false, server: true, zodReadsStored: true },
    { name: 'null status field', kind: 'ExecutionRequest', object: withValue(confirmed, ['status', 'txHash'], null), zod: false, server: true, zodReadsStored: true },
    { name: 'null defaulted field', kind: 'ExecutionRequest', object: withValue(confirmed, ['spec', 'batch'], null), zod: false, server: true, zodReadsStored: true },
    { name: 'null status', kind: 'ApiClient', object: withValue(apiClient, ['status'], null), zod: false, server: true, zodReadsStored: true },
    { name: 'callbackUrl not a URL', kind: 'ExecutionRequest', object: withValue(batch, ['spec', 'callbackUrl'], 'not a url'), zod: false, server: true, zodReadsStored: false },
  ];
}

function dropUndefined(x: unknown): unknown {
  return JSON.parse(JSON.stringify(x));
}
