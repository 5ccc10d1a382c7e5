import type { Address } from 'viem';
import type { Call, ExecutionRequest, ExecutionRequestStatus } from '../../../api/v1alpha1/index.ts';
import type { ChainWorker } from '../../../chain/types.ts';
import { chooseAutoToken } from '../../../payments/auto.ts';
import { claimOperationFee } from '../../../payments/claim.ts';
import type { Valuation } from '../../../policy/index.ts';
import type { ReconcileResult } from '../../../runtime/index.ts';
import { judgingCalls, runAdmission } from '../admission/steps.ts';
import type { Reconciling } from '../context.ts';
import { failByPolicy, refusalAtSigning, valuationAtSigning } from '../admission/policy.ts';
import { failByBudget, holdBudget } from '../admission/budget.ts';
import { replanAtSigning } from '../replan.ts';
import { handOn } from './submit.ts';
import { simulateOrFail, simulationFailed } from '../simulation.ts';
import { CACHE_CATCH_UP_MS, conditions, fail, paidMessage, simulationStatus, write, type SimulationEstimates } from '../status.ts';

/** What admission let through, to sign: the calls it added (the auto transfer), what the caller pays, and why. */
export interface SigningPlan {
  /** Calls admission appends to the request's own (the auto fee's transfer). */
  added: Call[];
  costUsd: number;
  reason: string;
  estimates: SimulationEstimates;
  payment?: ExecutionRequestStatus['payment'];
  /** Admission's valuation of the request's calls in this reconcile (admission/policy.ts), for the last judgement. */
  value?: Valuation | undefined;
  /** The budget step's reservation (admission/budget.ts); the last look before signing holds it again. */
  spend?: ExecutionRequestStatus['spend'];
  /** Gas at the maximum fee of the simulation the calls are signed from: what the budgets hold at signing. */
  costWei: bigint;
}

/** What the Queued write answers when it landed (identity, not shape: a conflict answers a requeue). */
const WRITTEN: ReconcileResult = { done: true };

/** The wallet cannot pay its auto fee after all: the caller answers with the mode's 402 (admit.ts). */
export const FEE_UNCOVERED = { feeUncovered: true } as const;

/** Paid (PaymentVerified): simulate again for the gas figures, then sign and queue what was paid for. */
export async function signPaid(r: Reconciling, req: ExecutionRequest, worker: ChainWorker): Promise<ReconcileResult> {
  const sim = await simulateOrFail(r, req, worker, req.spec.calls);
  // The calls would revert now, after the caller paid: fail, and say the payment was received (its receipt
  // stays claimed; a refund is the operator's, see docs/payments.md).
  if (!sim.ok) return sim.failed;
  const payment = req.status?.payment;
  const signed = await sign(r, req, worker, {
    added: [],
    costUsd: payment?.quote?.amountUsd ?? 0,
    reason: 'PaymentVerified',
    estimates: simulationStatus(sim.value, req.spec.paymentMode),
    costWei: sim.value.estimatedCostWei,
    ...(payment && { payment }),
  });
  return 'feeUncovered' in signed ? { requeueAfterMs: CACHE_CATCH_UP_MS } : signed; // nothing added: never uncovered
}

/**
 * Sign the operation and queue it: one status write. Operations of a wallet are signed in acceptance order. A
 * protocol action whose family plans again at signing is re-planned here (replan.ts), and its new calls judged
 * again by the admission steps that judge calls; what was signed is kept in status.signedCalls.
 */
export async function sign(r: Reconciling, req: ExecutionRequest, worker: ChainWorker, plan: SigningPlan): Promise<ReconcileResult | typeof FEE_UNCOVERED> {
  const t = r.now();
  const ref = { apiClient: req.spec.apiClient, agentId: req.spec.agentId };
  // Keep a wallet's operations in acceptance order: sign only when no earlier request of it is unsigned.
  if (r.deps.earlierUnsigned(req) > 0) return { requeueAfterMs: 5 };
  let estimates = plan.estimates;
  let spend = plan.spend;
  let costWei = plan.costWei;

  let own: readonly Call[] = req.spec.calls;
  let signedCalls: Call[] | undefined;
  let value = plan.value;
  if (r.deps.replan) {
    const replanned = await replanAtSigning(req, worker, r.deps.replan);
    if (replanned.kind === 'refused') return fail(r, req, replanned.failure, { Submitted: ['False', 'ReplanRefused', replanned.failure.message] });
    if (replanned.kind === 'replanned') {
      const judged = await runAdmission(r, { req, worker, t, calls: replanned.calls }, judgingCalls(r.admission));
      if (judged.kind === 'stopped') return judged.result;
      own = replanned.calls;
      signedCalls = replanned.calls;
      if (judged.found.simulation) {
        estimates = simulationStatus(judged.found.simulation, req.spec.paymentMode);
        costWei = judged.found.simulation.estimatedCostWei;
      }
      value = judged.found.value;
      if (judged.found.spend) spend = judged.found.spend; // the re-planned calls' reservation replaces the first
    }
  }
  const calls = [...own, ...plan.added];

  if (plan.added.length > 0) {
    // Calls were added (the auto transfer). The wallet's earlier fees are signed by now (acceptance order): if
    // they leave too little for this one, or what is signed, simulated as a whole, fails on the fee itself, the
    // wallet cannot pay after all and the answer is the auto mode's documented 402, not a failure of "call 1".
    const paid = plan.payment?.paid;
    const token = plan.payment?.quote?.tokens.find((x) => x.symbol === paid?.token);
    const covered = token && (await chooseAutoToken(worker, paid!.payer as Address, { tokens: [token] }, r.deps.autoFeesInFlight?.(req)));
    if (!covered) return FEE_UNCOVERED;
    const whole = await worker.simulate(ref, calls);
    if (!whole.ok) {
      const onTheFee = whole.error.code === 'simulation_reverted' && (whole.error.callIndex ?? -1) >= own.length;
      return onTheFee ? FEE_UNCOVERED : simulationFailed(r, req, whole.error);
    }
    // The estimates stay those of the calls with the transfer's priced gas (simulationStatus): the figures the
    // quote was made from, so estimated_cost_usd still reads off estimated_gas.
  }

  // What outflow and USD rules judge at the last look below, made now so that look waits on nothing.
  const valued = await valuationAtSigning(r, req, worker, own, value);

  // No read of the store first: the write below carries the resourceVersion the cache had, so a stale cache costs
  // a Conflict, never a wrong write (status.ts re-reads then, and writes only if the phase has not moved). The
  // operation is not lost either way: the worker keeps it for this request and these calls, and signing again hands
  // back the very same operation (its nonce is not spent twice, see chain/worker/prepare.ts).
  // The last look before a nonce is spent, with no wait in between: the policies as the cache has them now judge
  // what is signed (a change since admission, while it waited for a payment or for earlier requests, applies), and
  // a kill switch the controller has seen stops it.
  const refused = refusalAtSigning(r, req, own, estimates.smartWalletAddress, valued);
  if (refused) return failByPolicy(r, req, refused);
  // The budgets too, on what is signed now: a request paid after waiting (its cost, or the budgets, may have changed
  // since it was quoted) counts from now, at this simulation's cost; one that no longer fits is refused unsigned.
  const held = holdBudget(r, req, own, costWei, valued, r.now());
  if (held.kind === 'refused') return failByBudget(r, req, held.refusal);
  if (held.kind === 'held') spend = held.spend;
  const op = await worker.prepareOperation(ref, calls, { requestId: req.metadata.name });
  // The auto fee rides in this operation: claimed now, before it is sent, so a proof presenting the bundle's
  // transfer finds it taken, however fast it comes after the inclusion.
  let payment = plan.payment;
  if (payment?.paid?.method === 'auto') {
    const receipt = await claimOperationFee(r.deps.store, req.metadata.namespace ?? 'default', req, op, payment.paid);
    payment = { ...payment, paid: { ...payment.paid, receipt } };
  }
  const signed = await write(r, req, (s) => ({
    ...s,
    ...estimates,
    estimatedCostUsd: plan.costUsd, // what the caller pays (spec 2.2: reflects the payment mode)
    phase: 'Queued',
    costUsd: plan.costUsd,
    ...(payment && { payment }),
    ...(signedCalls && { signedCalls }),
    ...(spend && { spend }),
    userOperation: op,
    startTime: s.startTime ?? t.toISOString(),
    queuedTime: t.toISOString(),
    conditions: conditions(s, t, {
      Simulated: ['True', 'SimulationSucceeded', ''],
      PaymentSatisfied: ['True', plan.reason, payment?.paid ? paidMessage(payment.paid) : ''],
      Submitted: ['Unknown', 'Signed', `nonce ${op.nonce}`],
      Succeeded: ['Unknown', 'Queued', ''],
    }),
  }), WRITTEN, { evenIfCancelRequested: true }); // a cancel the cache did not show came too late: the signed operation stands
  if (payment?.paid?.method === 'credit' && payment.paid.creditOf !== undefined) await markCreditUsed(r, req, payment.paid.creditOf);
  if (signed !== WRITTEN) return signed;
  // Durable now: hand it on at once (phases/submit.ts). A worker that does not take it leaves the request Queued,
  // and its next look hands it on again.
  return handOn(r, op, worker).catch((): ReconcileResult => ({ requeueAfterMs: 1_000 }));
}

/**
 * Shows on the request that left a credit which request it paid. The credit's claim (made before) is what makes
 * it single-use; this is for the status and to keep the used credit out of the next look, so a failure is left.
 */
async function markCreditUsed(r: Reconciling, user: ExecutionRequest, source: string): Promise<void> {
  try {
    const left = await r.deps.store.get('ExecutionRequest', source, user.metadata.namespace);
    const credit = left.status?.payment?.credit;
    if (!credit || credit.usedBy !== undefined) return;
    await r.deps.store.updateStatus({ ...left, status: { ...left.status, payment: { ...left.status!.payment, credit: { ...credit, usedBy: user.metadata.name } } } });
  } catch {
    // Archived meanwhile, or changed: the claim still holds the credit to one use.
  }
}
