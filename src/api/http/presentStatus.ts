import { ANNOTATIONS, requestIdTimeMs, type ExecutionPhase, type ExecutionRequest, type ProtocolOrder } from '../v1alpha1/index.ts';
import type { RequestStatus, StatusRecord } from './status.ts';

/**
 * An ExecutionRequest as the API shows it (spec §2.3): the status record of `GET /status/:id`, which webhook events
 * carry too, and the times and status every presenter of a request shares. Pure functions of the resource.
 */

const PHASE_STATUS: Readonly<Record<ExecutionPhase, RequestStatus>> = {
  Pending: 'pending',
  PaymentRequired: 'payment_required',
  PaymentVerified: 'payment_verified',
  Queued: 'queued',
  Broadcasting: 'broadcasting',
  Confirmed: 'confirmed',
  Reverted: 'reverted',
  Failed: 'failed',
};

/** A resource without a phase has not been seen by the controller yet: it is pending. */
export const statusOf = (request: ExecutionRequest): RequestStatus => PHASE_STATUS[request.status?.phase ?? 'Pending'];

const iso = (t: string | undefined): string | undefined => (t === undefined ? undefined : new Date(t).toISOString());

/**
 * `created_at`: when the gateway accepted the request, to the millisecond (its acceptance id carries the time;
 * the store's creationTimestamp has whole seconds, as Kubernetes' does), else the creationTimestamp.
 */
export function createdAt(request: ExecutionRequest): string {
  const accepted = requestIdTimeMs(request.metadata.annotations?.[ANNOTATIONS.accepted]);
  if (accepted !== undefined) return new Date(accepted).toISOString();
  return iso(request.metadata.creationTimestamp) ?? new Date(0).toISOString();
}

/**
 * `updated_at` is the time of the request's last state transition: the latest of its conditions'
 * lastTransitionTime and its queued/start/completion times, or its creation time before any of them. It does
 * not move for bookkeeping writes (e.g. webhook delivery attempts) that leave the state as it was.
 */
export function updatedAt(request: ExecutionRequest): string {
  const s = request.status;
  const times = [
    createdAt(request),
    s?.queuedTime,
    s?.startTime,
    s?.completionTime,
    ...(s?.conditions ?? []).map((c) => c.lastTransitionTime),
  ]
    .filter((t): t is string => t !== undefined)
    .map((t) => Date.parse(t))
    .filter((t) => !Number.isNaN(t));
  return times.length === 0 ? createdAt(request) : new Date(Math.max(...times)).toISOString();
}

/**
 * `cost_usd` of spec §2.3: what the caller was charged once the request was queued (0 when sponsored, and when
 * an auto transfer reverted with its operation), else what it owes under its quote, else the estimate.
 */
export function costUsd(request: ExecutionRequest): number {
  const s = request.status;
  if (request.spec.paymentMode === 'sponsored') return 0;
  return s?.costUsd ?? s?.payment?.quote?.amountUsd ?? s?.estimatedCostUsd ?? 0;
}

/**
 * `history`: `pending` when the request was accepted, then each transition status.history kept. A request stored
 * before transitions were kept (an upgrade) has none: its creation and its current state are what is known.
 */
export function historyOf(request: ExecutionRequest): StatusRecord['history'] {
  const first = { status: 'pending' as const, at: createdAt(request) };
  const kept = request.status?.history;
  if (kept === undefined) {
    const now = statusOf(request);
    return now === 'pending' ? [first] : [first, { status: now, at: updatedAt(request) }];
  }
  return [first, ...kept.map((h) => ({ status: PHASE_STATUS[h.phase], at: iso(h.time)! }))];
}

export function presentStatus(request: ExecutionRequest): StatusRecord {
  const s = request.status;
  const lost = (s?.inclusionChanges ?? []).filter((c) => c.kind === 'Lost');
  return {
    request_id: request.metadata.name,
    status: statusOf(request),
    chain: request.spec.chain,
    tx_hash: s?.txHash ?? null,
    cost_usd: costUsd(request),
    created_at: createdAt(request),
    updated_at: updatedAt(request),
    agent_id: request.spec.agentId,
    strategy_id: request.spec.strategyId ?? null,
    smart_wallet_address: s?.smartWalletAddress ?? null,
    calls: request.spec.calls.length,
    estimated_gas: s?.estimatedGas ?? null,
    ...(s?.l1DataGas !== undefined && { l1_data_gas: s.l1DataGas }),
    block_number: s?.blockNumber ?? null,
    gas_used: s?.gasUsed ?? null,
    failure: s?.failure
      ? {
          code: s.failure.code,
          message: s.failure.message,
          revert_reason: s.failure.revertReason ?? null,
          ...(s.failure.protocolError && { protocol_error: s.failure.protocolError }),
          ...(s.failure.policy && { policy: { name: s.failure.policy.name, rule: s.failure.policy.rule ?? null, ...(s.failure.policy.budget !== undefined && { budget: s.failure.policy.budget }) } }),
        }
      : null,
    credit: s?.payment?.credit
      ? { amount_usd: s.payment.credit.amountUsd, expires_at: s.payment.credit.expiresAt, used_by: s.payment.credit.usedBy ?? null }
      : null,
    // Only when there is something to say: the record of every other request keeps its exact shape.
    ...(request.spec.action && { action: { name: request.spec.action.name, input: request.spec.action.input } }),
    history: historyOf(request),
    ...(request.spec.cancelRequestedTime !== undefined && { cancel_requested_at: iso(request.spec.cancelRequestedTime)! }),
    ...orderOf(request),
    ...(lost.length > 0 && { lost_inclusions: lost.map((c) => ({ tx_hash: c.txHash, block_number: c.blockNumber, lost_at: c.time })) }),
  };
}


/**
 * `order`, for an action whose protocol settles what it created later: status.order as it stands, or pending from
 * the confirmation on until the order controller has found the order (its key is then still unknown).
 */
function orderOf(request: ExecutionRequest): { order?: NonNullable<StatusRecord['order']> } {
  const s = request.status;
  const settles = request.spec.action?.followed;
  if (settles === undefined) return s?.order ? { order: presentOrder(s.order, 'next_price') } : {};
  if (s?.order) return { order: presentOrder(s.order, settles) };
  if (s?.phase !== 'Confirmed') return {};
  return { order: { key: null, state: 'pending', settles, fill_price: null, reason: null, tx_hash: null, updated_at: iso(s.completionTime) ?? updatedAt(request) } };
}

/** status.order as the API shows it. */
const presentOrder = (o: ProtocolOrder, settles: 'next_price' | 'at_trigger'): NonNullable<StatusRecord['order']> => ({
  key: o.key,
  state: o.state.toLowerCase() as NonNullable<StatusRecord['order']>['state'],
  settles,
  fill_price: o.fillPrice ?? null,
  reason: o.reason ?? null,
  tx_hash: o.txHash ?? null,
  updated_at: iso(o.time)!,
});
