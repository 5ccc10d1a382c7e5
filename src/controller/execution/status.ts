import type { ExecutionRequest, ExecutionRequestSpec, ExecutionRequestStatus, Failure, PaymentMode, PaymentRecord } from '../../api/v1alpha1/index.ts';
import { CONDITION, MAX_PHASE_HISTORY, setCondition } from '../../api/v1alpha1/index.ts';
import type { SimulationResult } from '../../chain/types.ts';
import { creditLeftBy } from '../../payments/credit.ts';
import { pricedGas } from '../../payments/pricing.ts';
import type { ReconcileResult } from '../../runtime/index.ts';
import { isStoreError } from '../../store/types.ts';
import { withTransitionEvent } from '../../webhooks/eventLog.ts';
import type { Reconciling } from './context.ts';

/**
 * How every phase writes a request's status: one write per step, from the status it read, with the conditions
 * it changes and the webhook event a transition owes (src/webhooks/eventLog.ts).
 */

/**
 * The store is ahead of the informer's cache (our own write's watch event is on its way): look again after
 * this, not at once. At once, the stale cache would send the same step again, and again, until the event lands.
 */
export const CACHE_CATCH_UP_MS = 10;

export type Status = 'True' | 'False' | 'Unknown';
export type ConditionChange = [Status, string, string];

export function conditions(s: ExecutionRequestStatus, t: Date, changes: Partial<Record<keyof typeof CONDITION, ConditionChange>>) {
  let list = s.conditions ?? [];
  for (const [type, [status, reason, message]] of Object.entries(changes)) {
    list = setCondition(list, { type, status, reason, message }, t);
  }
  return list;
}

/**
 * The figures a simulation gives the status record. `estimatedGas` is the gas the request is priced on under its
 * mode (pricedGas: the auto mode's includes its fee transfer's), so the cost shown reads off the gas shown.
 */
export function simulationStatus(sim: SimulationResult, mode: PaymentMode): SimulationEstimates {
  return {
    smartWalletAddress: sim.wallet.address,
    estimatedGas: Number(pricedGas(mode, sim.estimatedGas)),
    ...(sim.l1Data && { l1DataGas: Number(sim.l1Data.gas) }),
    estimatedCostUsd: sim.estimatedCostUsd,
  };
}

/** The status figures a simulation gives (simulationStatus). */
export type SimulationEstimates = Pick<ExecutionRequestStatus, 'smartWalletAddress' | 'estimatedGas' | 'l1DataGas' | 'estimatedCostUsd'>;

export const paidMessage = (p: PaymentRecord): string =>
  `${p.method}: ${p.amountRaw} raw ${p.token} from ${p.payer}${p.txHash ? ` in ${p.txHash}` : ''}`;

/** simulation_reverted → SimulationReverted: condition reasons are CamelCase. */
export const camel = (code: string): string =>
  code
    .split(/[_\s-]+/)
    .filter(Boolean)
    .map((w) => w[0]!.toUpperCase() + w.slice(1))
    .join('');

export async function readStored(r: Reconciling, req: ExecutionRequest): Promise<ExecutionRequest | undefined> {
  try {
    return await r.deps.store.get('ExecutionRequest', req.metadata.name, req.metadata.namespace);
  } catch (e) {
    if (isStoreError(e, 'NotFound')) return undefined;
    throw e;
  }
}

/**
 * `next` with its phase change, if it makes one, appended to status.history (the newest MAX_PHASE_HISTORY kept):
 * every transition is recorded in the very write that makes it, so the history cannot miss or reorder one. A
 * write that passes through a phase without writing it (phases/submit.ts) adds that phase's entry in `next`.
 */
export function withHistory(before: ExecutionRequestStatus | undefined, next: ExecutionRequestStatus, t: Date): ExecutionRequestStatus {
  const from = before?.phase ?? 'Pending';
  if (next.phase === undefined || next.phase === from) return next;
  const history = [...(next.history ?? before?.history ?? []), { phase: next.phase, time: t.toISOString() }].slice(-MAX_PHASE_HISTORY);
  return { ...next, history };
}

/** Whether two specs differ in more than the caller's cancel request (the one spec change a signing outlives). */
const movedBesidesCancel = (a: ExecutionRequestSpec, b: ExecutionRequestSpec): boolean =>
  JSON.stringify({ ...a, cancelRequestedTime: undefined }) !== JSON.stringify({ ...b, cancelRequestedTime: undefined });

/**
 * Writes the next status computed from the current one, with the resourceVersion it was read at. On a
 * conflict (someone else wrote since) we re-read and re-apply only if the phase has not moved meanwhile;
 * otherwise the next reconcile decides. `evenIfSpecMoved` re-applies whatever the spec became;
 * `evenIfCancelRequested` only when the spec's one change is a cancel request (a signed operation is kept: the
 * cancel came too late, see phases/cancel.ts).
 */
export async function write(
  r: Reconciling,
  req: ExecutionRequest,
  next: (s: ExecutionRequestStatus) => ExecutionRequestStatus,
  result: ReconcileResult = { done: true },
  opts: { evenIfSpecMoved?: boolean; evenIfCancelRequested?: boolean } = {},
): Promise<ReconcileResult> {
  let current = req;
  for (let attempt = 0; attempt < 5; attempt++) {
    // A transition that owes the callback URL an event records it in this same write (src/webhooks/eventLog.ts),
    // after its history entry, so the event's record carries it.
    const status = withTransitionEvent(current, withHistory(current.status, next({ ...(current.status ?? {}) }), r.now()));
    status.observedGeneration = current.metadata.generation;
    try {
      await r.deps.store.updateStatus({ ...current, status });
      return result;
    } catch (e) {
      if (!isStoreError(e, 'Conflict')) throw e;
      const fresh = await readStored(r, req);
      // Moved on (another phase, or a new payment attached): what we computed is stale; decide again once the
      // cache has caught up.
      const specMoved =
        fresh !== undefined &&
        fresh.metadata.generation !== req.metadata.generation &&
        opts.evenIfSpecMoved !== true &&
        !(opts.evenIfCancelRequested === true && !movedBesidesCancel(fresh.spec, req.spec));
      if (!fresh || fresh.status?.phase !== req.status?.phase || specMoved) return { requeueAfterMs: CACHE_CATCH_UP_MS };
      current = fresh;
    }
  }
  throw new Error(`status of ${req.metadata.name} kept conflicting`);
}

/** Ends the request Failed with `failure`; a payment taken and not executed stays the caller's, as a credit. */
export function fail(
  r: Reconciling,
  req: ExecutionRequest,
  failure: Failure,
  extra: Partial<Record<keyof typeof CONDITION, ConditionChange>> = {},
  fields: Partial<ExecutionRequestStatus> = {},
  opts: { unlessSigned?: boolean } = {},
): Promise<ReconcileResult> {
  const t = r.now();
  return write(r, req, (s) => {
    // Signed since it was read (a write between this reconcile's read and now): its operation stands.
    if (opts.unlessSigned === true && s.userOperation !== undefined) return s;
    // Paid and not executed: the payment stays the caller's, as a credit (payments/credit.ts).
    const credit = creditLeftBy({ ...req, status: s }, t);
    return {
      ...s,
      ...fields,
      ...(credit && s.payment && { payment: { ...s.payment, credit } }),
      phase: 'Failed',
      failure,
      startTime: s.startTime ?? t.toISOString(),
      completionTime: t.toISOString(),
      conditions: conditions(s, t, { ...extra, Succeeded: ['False', camel(failure.code), failure.message] }),
    };
  });
}
