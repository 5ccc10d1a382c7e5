import type { ApiClient, Call, ExecutionRequest, ExecutionRequestStatus, Failure, PaymentQuote, PaymentRecord, PaymentRejection } from '../../api/v1alpha1/index.ts';
import { CONDITION, isTerminal, setCondition } from '../../api/v1alpha1/index.ts';
import { ChainError, isChainError } from '../../chain/errors.ts';
import type { Address } from 'viem';
import type { ChainWorker, OperationOutcome, SimulationFailure, SimulationResult } from '../../chain/types.ts';
import type { ChainName } from '../../config/chains.ts';
import { claimOperationFee } from '../../payments/claim.ts';
import { chooseAutoToken } from '../../payments/auto.ts';
import { creditLeftBy } from '../../payments/credit.ts';
import type { Admission, AutoFee, Credit, PaymentContext, PaymentPolicies } from '../../payments/types.ts';
import type { HeldAmounts } from '../../payments/uniqueAmounts.ts';
import type { ReconcileResult } from '../../runtime/index.ts';
import type { ResourceStore } from '../../store/types.ts';
import { isStoreError } from '../../store/types.ts';
import { withTransitionEvent } from '../../webhooks/eventLog.ts';
import type { InclusionChangeResult } from '../../metrics/registry.ts';
import type { InclusionSuspects } from './inclusionAudit.ts';
import { judgeInclusion, recordChange } from './inclusionJudge.ts';
import { keyChangeFor, type KeyTerms } from './keyChange.ts';
import { withProtocolError } from './protocolRevert.ts';

export interface ExecutionReconcilerDeps {
  store: ResourceStore;
  workers: ReadonlyMap<ChainName, ChainWorker>;
  payments: PaymentPolicies;
  /** The amounts open quotes hold (from the informer's cache): a new 402's quote asks for others. */
  amounts: HeldAmounts;
  /** The auto-mode fees of the request's wallet signed by other requests and not yet final (from the cache). */
  autoFeesInFlight?: (request: ExecutionRequest) => AutoFee[];
  /** The unused credits of the request's key and agent (from the cache), oldest first. */
  creditsFor?: (request: ExecutionRequest) => Credit[];
  /** The request as the shared informer has it (a copy the reconciler may change), or undefined once gone. */
  cached(namespace: string, name: string): ExecutionRequest | undefined;
  /** The request's key as the shared ApiClient cache has it (keyChange.ts): a waiting request follows it. */
  apiClient?(namespace: string, name: string): ApiClient | undefined;
  /**
   * Requests of the same wallet that were accepted earlier and are not yet signed. Operations of one wallet
   * are signed in acceptance order, so nonces follow the order agents sent them.
   */
  earlierUnsigned(request: ExecutionRequest): number;
  /** The outcome the chain worker pushed for an operation since the last look (taken: asked once). */
  takePushedOutcome(opHash: string): OperationOutcome | undefined;
  now?: () => Date;
  /** How long a Broadcasting request waits for a pushed outcome before asking the worker again. */
  outcomePollMs?: number;
  /** How often an inclusion short of the chain's confirmation depth is checked again (default 2 s). */
  inclusionPollMs?: number;
  /** How long after its quote expired an unpaid request still waits for a payment on its way (default 60 s). */
  paymentGraceMs?: number;
  /**
   * How long admission keeps retrying a chain that does not answer before the request fails with
   * `chain_unavailable`. Nothing is signed before admission succeeds, so failing is safe, and the agent gets
   * a clear "not executed, retry later" instead of a timeout that leaves it guessing.
   */
  admissionRetryMs?: number;
  /**
   * How long a request may stay unadmitted (no phase, or Pending) before it fails with `admission_timeout`,
   * whatever keeps it there (default 2 min): a request must leave `pending` (spec §3: it reaches a terminal state).
   */
  admissionTimeoutMs?: number;
  /** Counts an unexpected error that failed a request with `internal_error` (the step it came from). */
  onInternalError?: (step: InternalErrorStep) => void;
  /**
   * Finished requests whose inclusion was not found where their status says (inclusionAudit.ts): a reconcile of
   * one judges it again (inclusionJudge.ts) instead of leaving a terminal request alone.
   */
  inclusionSuspects?: InclusionSuspects;
  /** Told each change a judged inclusion made (for the metric and the log). */
  onInclusionChange?: (request: ExecutionRequest, result: InclusionChangeResult, detail: string) => void;
}

/** Where an unexpected error failed a request: admitting it, or judging a payment attached to it. */
export type InternalErrorStep = 'admission' | 'payment';

/** Pace of retries while a chain or its worker does not answer. */
const UNAVAILABLE_RETRY_MS = 1_000;
/**
 * The store is ahead of the informer's cache (our own write's watch event is on its way): look again after
 * this, not at once. At once, the stale cache would send the same step again, and again, until the event lands.
 */
const CACHE_CATCH_UP_MS = 10;
const retryWhenUnavailable = (e: unknown): ReconcileResult => {
  if (isChainError(e, 'rpc_unavailable')) return { requeueAfterMs: UNAVAILABLE_RETRY_MS };
  throw e;
};
/** Errors worth retrying: the store or a chain did not answer. Anything else is a defect, not a condition. */
const isTransient = (e: unknown): boolean => isChainError(e, 'rpc_unavailable') || isStoreError(e);

/**
 * The execution reconciler: reads one ExecutionRequest, takes the one next step of spec §3 and writes status.
 *   (new/Pending) ─simulate, pay, sign─▶ Queued(op) ─submit─▶ Broadcasting ─outcome, at depth─▶ Confirmed|Reverted|Failed
 *
 * It reads the informer's cache, not the store: every write carries the resourceVersion it read, so a stale
 * cache can only cost a Conflict and a re-read, never a wrong write. The one step that cannot be undone by a
 * failed write, signing (it spends a nonce), re-reads the store first.
 *
 * The signed operation is written to status before it is sent: a retry after a crash re-sends that same
 * operation, and the EntryPoint nonce makes a second execution impossible. An inclusion becomes `Confirmed`
 * only at the chain's confirmation depth; until then each look re-checks it, and one a reorg removed sends the
 * same operation again (or fails with nonce_used when another operation took its nonce). A terminal request is
 * left alone, except when its inclusion was found gone afterwards (a suspect): it may then move back to
 * Broadcasting (sent again), follow its inclusion to another block, or fail with inclusion_lost or payment_lost.
 */
export function createExecutionReconciler(deps: ExecutionReconcilerDeps) {
  const now = deps.now ?? (() => new Date());
  const pollMs = deps.outcomePollMs ?? 15_000;
  const inclusionPollMs = deps.inclusionPollMs ?? 2_000;
  const paymentGraceMs = deps.paymentGraceMs ?? 60_000;
  const admissionRetryMs = deps.admissionRetryMs ?? 10_000;
  const admissionTimeoutMs = deps.admissionTimeoutMs ?? 120_000;
  /** What a payment policy is told about the request (besides the simulation). */
  const paymentContext = (request: ExecutionRequest, worker: ChainWorker, t: Date): PaymentContext => ({
    request,
    worker,
    now: t,
    amounts: deps.amounts,
    feesInFlight: deps.autoFeesInFlight?.(request),
    credits: deps.creditsFor?.(request),
  });

  /**
   * An unexpected error while admitting a request or judging its payment (a defect, or input no check foresaw)
   * fails the request with `internal_error` and is counted, rather than retried forever: a retry meets the same
   * error, and the request would never leave `pending` (nor its quote ever expire, being made again each time).
   * Nothing was signed, so failing moves no money.
   */
  function failInternally(req: ExecutionRequest, step: InternalErrorStep, e: unknown): Promise<ReconcileResult> {
    if (isTransient(e)) throw e;
    deps.onInternalError?.(step);
    const detail = e instanceof Error ? e.message : String(e);
    return fail(req, {
      code: 'internal_error',
      message: `the request failed on an internal error while ${step === 'admission' ? 'being admitted' : 'its payment was verified'}; nothing was executed (${detail.split('\n')[0]!.slice(0, 200)})`,
    });
  }

  async function reconcile(namespace: string, name: string): Promise<ReconcileResult> {
    const req = deps.cached(namespace, name);
    if (!req) return { done: true };
    const phase = req.status?.phase;
    if (isTerminal(phase)) {
      const suspect = deps.inclusionSuspects?.has(namespace, name) === true;
      const worker = deps.workers.get(req.spec.chain);
      if (!suspect || !worker) return { done: true };
      return recheckInclusion(req, worker).catch(retryWhenUnavailable);
    }
    const worker = deps.workers.get(req.spec.chain);
    if (!worker) return fail(req, { code: 'chain_unavailable', message: `no chain worker serves '${req.spec.chain}'` });

    switch (phase) {
      case undefined:
      case 'Pending': {
        const ageOf = () => now().getTime() - Date.parse(req.metadata.creationTimestamp ?? now().toISOString());
        if (ageOf() >= admissionTimeoutMs) {
          return fail(req, {
            code: 'admission_timeout',
            message: `the request was not admitted within ${Math.round(admissionTimeoutMs / 1000)} s of its acceptance; nothing was executed; send it again`,
          });
        }
        return admitAndSign(req, worker).catch((e: unknown) => {
          // A chain (or its worker) that does not answer: tried again every second, until admissionRetryMs
          // after acceptance. A fixed pace, not the queue's error backoff: failures come fast (connection
          // refused), and an exponential delay would grow past the deadline after a few of them.
          if (!isChainError(e, 'rpc_unavailable')) return failInternally(req, 'admission', e);
          const age = ageOf();
          if (age < admissionRetryMs) return { requeueAfterMs: Math.min(UNAVAILABLE_RETRY_MS, admissionRetryMs - age) };
          return fail(
            req,
            { code: 'chain_unavailable', message: `${req.spec.chain} did not answer for ${Math.round(age / 1000)} s: ${e.shortMessage}` },
            { Simulated: ['Unknown', 'ChainUnavailable', e.shortMessage] },
          );
        });
      }
      // Waiting for a payment: act when one is attached (a spec change), or when its key changed (keyChange.ts);
      // the chain's absence only delays that.
      case 'PaymentRequired':
        return waitForPayment(namespace, req, worker).catch((e: unknown) =>
          isChainError(e, 'rpc_unavailable') ? retryWhenUnavailable(e) : failInternally(req, 'payment', e),
        );
      // Paid: sign and queue. Never given up for an unreachable chain: the money has moved.
      case 'PaymentVerified':
        return signPaid(req, worker).catch(retryWhenUnavailable);
      // Signed and persisted: nothing to give up on while the worker is away; look again every second.
      case 'Queued':
        return submit(req, worker).catch(retryWhenUnavailable);
      case 'Broadcasting':
        return track(req, worker).catch(retryWhenUnavailable);
      default:
        return { done: true };
    }
  }

  /** The simulation of `calls` from the request's wallet; a revert fails the request (with its reason). */
  async function simulateOrFail(req: ExecutionRequest, worker: ChainWorker, calls: readonly Call[]) {
    const sim = await worker.simulate({ apiClient: req.spec.apiClient, agentId: req.spec.agentId }, calls);
    if (sim.ok) return sim;
    return { ok: false as const, failed: simulationFailed(req, sim.error) };
  }

  /** Fails the request with a simulation's failure; a chain that did not answer is retried instead. */
  function simulationFailed(req: ExecutionRequest, error: SimulationFailure): Promise<ReconcileResult> {
    if (error.code === 'rpc_unavailable') throw new ChainError('rpc_unavailable', error.message);
    return fail(
      req,
      withProtocolError(req, {
        code: error.code,
        message: error.message,
        ...(error.callIndex !== undefined && { callIndex: error.callIndex }),
        ...(error.revertReason !== undefined && { revertReason: error.revertReason }),
        ...(error.revertData !== undefined && { revertData: error.revertData }),
      }),
      { Simulated: ['False', 'SimulationReverted', error.message] },
    );
  }

  /**
   * A new request: simulate, ask its payment policy, then sign (one status write to Queued), or wait for a
   * payment (PaymentRequired with the quote), or record a payment that came with it (PaymentVerified).
   */
  async function admitAndSign(req: ExecutionRequest, worker: ChainWorker): Promise<ReconcileResult> {
    const t = now();
    const sim = await simulateOrFail(req, worker, req.spec.calls);
    if (!sim.ok) return sim.failed;
    const admission = await deps.payments[req.spec.paymentMode].admit({ ...paymentContext(req, worker, t), simulation: sim.value });
    return applyAdmission(req, worker, admission, simulationStatus(sim.value), t);
  }

  async function applyAdmission(
    req: ExecutionRequest,
    worker: ChainWorker,
    admission: Admission,
    estimates: Pick<ExecutionRequestStatus, 'smartWalletAddress' | 'estimatedGas' | 'estimatedCostUsd'>,
    t: Date,
    extra: Partial<ExecutionRequestStatus> = {},
    earlierQuotes: PaymentQuote[] = [],
  ): Promise<ReconcileResult> {
    switch (admission.kind) {
      case 'refused':
        return fail(req, admission.failure, { Simulated: ['True', 'SimulationSucceeded', ''] });
      case 'required':
        return write(req, (s) => ({
          ...s,
          ...estimates,
          ...extra,
          estimatedCostUsd: admission.quote.amountUsd,
          phase: 'PaymentRequired',
          payment: {
            quote: admission.quote,
            ...(earlierQuotes.length > 0 && { earlierQuotes }),
            ...(admission.rejection && { rejection: { ...admission.rejection, observedGeneration: req.metadata.generation ?? 0 } }),
          },
          startTime: s.startTime ?? t.toISOString(),
          conditions: conditions(s, t, {
            Simulated: ['True', 'SimulationSucceeded', ''],
            PaymentSatisfied: ['False', 'PaymentRequired', `pay ${admission.quote.amountUsd} USD by ${admission.quote.expiresAt}`],
            Succeeded: ['Unknown', 'AwaitingPayment', ''],
          }),
        }));
      case 'verified':
        return write(req, (s) => ({
          ...s,
          ...estimates,
          estimatedCostUsd: admission.quote.amountUsd,
          phase: 'PaymentVerified',
          payment: { quote: admission.quote, paid: admission.paid },
          startTime: s.startTime ?? t.toISOString(),
          conditions: conditions(s, t, {
            Simulated: ['True', 'SimulationSucceeded', ''],
            PaymentSatisfied: ['True', 'PaymentVerified', paidMessage(admission.paid)],
            Succeeded: ['Unknown', 'PaymentVerified', ''],
          }),
        }));
      case 'satisfied':
        return sign(req, worker, {
          calls: [...req.spec.calls, ...(admission.calls ?? [])],
          costUsd: admission.costUsd,
          reason: admission.reason,
          estimates,
          ...((admission.quote || admission.paid) && { payment: { ...(admission.quote && { quote: admission.quote }), ...(admission.paid && { paid: admission.paid }) } }),
        });
    }
  }

  /** Waiting for a payment, as its key now has it: revoked, or another mode, ends the wait at once (keyChange.ts). */
  async function waitForPayment(namespace: string, req: ExecutionRequest, worker: ChainWorker): Promise<ReconcileResult> {
    const change = keyChangeFor(req, deps.apiClient?.(namespace, req.spec.apiClient));
    switch (change.kind) {
      case 'revoked':
        return fail(req, change.failure, { PaymentSatisfied: ['False', 'KeyRevoked', change.failure.message] });
      case 'follow':
        return followKey(req, worker, change.terms);
      case 'requote':
        return requote(req, worker, now());
      case 'judgeFirst': {
        // The verdict written, look again: the key's change is acted on once the cache has it.
        const judged = await awaitPayment(req, worker);
        return 'done' in judged ? { requeueAfterMs: CACHE_CATCH_UP_MS } : judged;
      }
      case 'none':
        return awaitPayment(req, worker);
    }
  }

  /**
   * Waiting for a payment. A payment attached since the last look (the spec's generation moved) is verified
   * against the stored quote: paid → PaymentVerified; refused → the reason is recorded for that generation (the
   * gateway answers 402 payment_verification_failed) and the request keeps waiting; quote expired → quoted
   * afresh (a new 402). Nothing attached: nothing to do.
   */
  async function awaitPayment(req: ExecutionRequest, worker: ChainWorker): Promise<ReconcileResult> {
    const s0 = req.status!;
    const generation = req.metadata.generation ?? 0;
    if (!s0.payment?.quote) return { done: true };
    if (generation <= (s0.observedGeneration ?? 0)) {
      // Nothing new attached. A request nobody pays for must still end (spec §3): once its quote has expired
      // and a grace for a payment on its way has passed, it fails; until then, look again at that moment.
      const left = Date.parse(s0.payment.quote.expiresAt) + paymentGraceMs - now().getTime();
      if (left > 0) return { requeueAfterMs: left };
      return fail(req, {
        code: 'payment_not_received',
        message: `no payment was verified before the quote expired at ${s0.payment.quote.expiresAt}; send the request again for a new quote`,
      });
    }
    const t = now();
    const quotes = [s0.payment.quote, ...(s0.payment.earlierQuotes ?? [])];
    const verdict = await deps.payments[req.spec.paymentMode].verify(paymentContext(req, worker, t), quotes);
    switch (verdict.kind) {
      case 'verified':
        // A claimed payment is a fact: recorded even if another payment was attached meanwhile (that one is
        // answered as a replay), so no claim is left without the request it paid for. The quote it paid (an
        // earlier one, when the transfer was made for that) is what the request costs.
        return write(req, (s) => ({
          ...s,
          phase: 'PaymentVerified',
          payment: { ...s.payment, quote: verdict.quote ?? s.payment?.quote, paid: verdict.paid, rejection: undefined },
          conditions: conditions(s, t, {
            PaymentSatisfied: ['True', 'PaymentVerified', paidMessage(verdict.paid)],
            Succeeded: ['Unknown', 'PaymentVerified', ''],
          }),
        }), { done: true }, { evenIfSpecMoved: true });
      case 'rejected':
        return write(req, (s) => ({
          ...s,
          payment: { ...s.payment, rejection: { ...verdict.rejection, observedGeneration: generation } },
          conditions: conditions(s, t, { PaymentSatisfied: ['False', camel(verdict.rejection.reason), verdict.rejection.message] }),
        }));
      case 'expired':
        // The 402 the caller gets carries the new quote and says why.
        return requote(req, worker, t, { reason: 'quote_expired', message: `the quote expired at ${s0.payment.quote.expiresAt}; pay the new one`, retryable: false });
    }
  }

  /**
   * Quote a waiting request again from a fresh simulation, under its mode as it is now: an admission that needs no
   * payment (sponsored; auto with a covering token) proceeds, else a new quote. Earlier quotes whose amounts are
   * still held are kept: a transfer made for one in time still pays.
   */
  async function requote(req: ExecutionRequest, worker: ChainWorker, t: Date, rejection?: Omit<PaymentRejection, 'observedGeneration'>): Promise<ReconcileResult> {
    const sim = await simulateOrFail(req, worker, req.spec.calls);
    if (!sim.ok) return sim.failed;
    const admission = await deps.payments[req.spec.paymentMode].admit({
      ...paymentContext({ ...req, spec: { ...req.spec, paymentProof: undefined, x402Payment: undefined } }, worker, t),
      simulation: sim.value,
    });
    if (admission.kind !== 'required') return applyAdmission(req, worker, admission, simulationStatus(sim.value), t);
    const payment = req.status?.payment;
    const quotes = payment?.quote ? [payment.quote, ...(payment.earlierQuotes ?? [])] : [];
    const earlierQuotes = quotes.filter((q) => q.reservedUntil !== undefined && Date.parse(q.reservedUntil) > t.getTime()).slice(0, 3);
    return applyAdmission(req, worker, rejection ? { ...admission, rejection } : admission, simulationStatus(sim.value), t, {}, earlierQuotes);
  }

  /**
   * The key of a waiting request has another payment mode now: the request takes the key's terms (a spec write,
   * detaching the payment already judged, so a moved spec with none attached reads as "quote again"), then is
   * quoted under them.
   */
  async function followKey(req: ExecutionRequest, worker: ChainWorker, terms: KeyTerms): Promise<ReconcileResult> {
    let moved: ExecutionRequest;
    try {
      moved = await deps.store.update({ ...req, spec: { ...req.spec, ...terms, paymentProof: undefined, x402Payment: undefined } });
    } catch (e) {
      // A payment attached meanwhile: judged first, once the cache has it.
      if (isStoreError(e, 'Conflict')) return { requeueAfterMs: CACHE_CATCH_UP_MS };
      throw e;
    }
    return requote(moved, worker, now());
  }

  /** Paid (PaymentVerified): simulate again for the gas figures, then sign and queue what was paid for. */
  async function signPaid(req: ExecutionRequest, worker: ChainWorker): Promise<ReconcileResult> {
    const sim = await simulateOrFail(req, worker, req.spec.calls);
    // The calls would revert now, after the caller paid: fail, and say the payment was received (its receipt
    // stays claimed; a refund is the operator's, see docs/payments.md).
    if (!sim.ok) return sim.failed;
    const payment = req.status?.payment;
    return sign(req, worker, {
      calls: req.spec.calls,
      costUsd: payment?.quote?.amountUsd ?? 0,
      reason: 'PaymentVerified',
      estimates: simulationStatus(sim.value),
      ...(payment && { payment }),
    });
  }

  /** Sign the operation and queue it: one status write. Operations of a wallet are signed in acceptance order. */
  async function sign(
    req: ExecutionRequest,
    worker: ChainWorker,
    plan: {
      calls: Call[];
      costUsd: number;
      reason: string;
      estimates: Pick<ExecutionRequestStatus, 'smartWalletAddress' | 'estimatedGas' | 'estimatedCostUsd'>;
      payment?: ExecutionRequestStatus['payment'];
    },
  ): Promise<ReconcileResult> {
    const t = now();
    const ref = { apiClient: req.spec.apiClient, agentId: req.spec.agentId };
    // Keep a wallet's operations in acceptance order: sign only when no earlier request of it is unsigned.
    if (deps.earlierUnsigned(req) > 0) return { requeueAfterMs: 5 };
    let estimates = plan.estimates;
    if (plan.calls.length > req.spec.calls.length) {
      // Calls were added (the auto transfer). The wallet's earlier fees are signed by now (acceptance order): if
      // they leave too little for this one, or what is signed, simulated as a whole, fails on the fee itself, the
      // wallet cannot pay after all and the answer is the auto mode's documented 402, not a failure of "call 1".
      const paid = plan.payment?.paid;
      const token = plan.payment?.quote?.tokens.find((x) => x.symbol === paid?.token);
      const covered = token && (await chooseAutoToken(worker, paid!.payer as Address, { tokens: [token] }, deps.autoFeesInFlight?.(req)));
      if (!covered) return requireFromOutside(req, worker);
      const whole = await worker.simulate(ref, plan.calls);
      if (!whole.ok) {
        const onTheFee = whole.error.code === 'simulation_reverted' && (whole.error.callIndex ?? -1) >= req.spec.calls.length;
        return onTheFee ? requireFromOutside(req, worker) : simulationFailed(req, whole.error);
      }
      estimates = simulationStatus(whole.value);
    }

    // Signing spends a nonce, and a write that then fails would strand it: act only on the stored object. If the
    // cache trailed it (another replica, or a spec change, got there first), look again once the cache has it.
    const current = await readStored(req);
    if (!current) return { done: true };
    if (
      current.status?.phase !== req.status?.phase ||
      current.status?.userOperation !== undefined ||
      current.metadata.generation !== req.metadata.generation
    ) {
      return { requeueAfterMs: CACHE_CATCH_UP_MS };
    }

    const op = await worker.prepareOperation(ref, plan.calls, { requestId: req.metadata.name });
    // The auto fee rides in this operation: claimed now, before it is sent, so a proof presenting the bundle's
    // transfer finds it taken, however fast it comes after the inclusion.
    let payment = plan.payment;
    if (payment?.paid?.method === 'auto') {
      const receipt = await claimOperationFee(deps.store, current.metadata.namespace ?? 'default', req, op, payment.paid);
      payment = { ...payment, paid: { ...payment.paid, receipt } };
    }
    const signed = await write(current, (s) => ({
      ...s,
      ...estimates,
      estimatedCostUsd: plan.costUsd, // what the caller pays (spec 2.2: reflects the payment mode)
      phase: 'Queued',
      costUsd: plan.costUsd,
      ...(payment && { payment }),
      userOperation: op,
      startTime: s.startTime ?? t.toISOString(),
      queuedTime: t.toISOString(),
      conditions: conditions(s, t, {
        Simulated: ['True', 'SimulationSucceeded', ''],
        PaymentSatisfied: ['True', plan.reason, payment?.paid ? paidMessage(payment.paid) : ''],
        Submitted: ['Unknown', 'Signed', `nonce ${op.nonce}`],
        Succeeded: ['Unknown', 'Queued', ''],
      }),
    }));
    if (payment?.paid?.method === 'credit' && payment.paid.creditOf !== undefined) await markCreditUsed(current, payment.paid.creditOf);
    return signed;
  }

  /**
   * Shows on the request that left a credit which request it paid. The credit's claim (made before) is what makes
   * it single-use; this is for the status and to keep the used credit out of the next look, so a failure is left.
   */
  async function markCreditUsed(user: ExecutionRequest, source: string): Promise<void> {
    try {
      const left = await deps.store.get('ExecutionRequest', source, user.metadata.namespace);
      const credit = left.status?.payment?.credit;
      if (!credit || credit.usedBy !== undefined) return;
      await deps.store.updateStatus({ ...left, status: { ...left.status, payment: { ...left.status!.payment, credit: { ...credit, usedBy: user.metadata.name } } } });
    } catch {
      // Archived meanwhile, or changed: the claim still holds the credit to one use.
    }
  }

  /** The mode's 402 for a request whose payment it cannot take itself after all (see PaymentPolicy.required). */
  async function requireFromOutside(req: ExecutionRequest, worker: ChainWorker): Promise<ReconcileResult> {
    const t = now();
    const sim = await simulateOrFail(req, worker, req.spec.calls);
    if (!sim.ok) return sim.failed;
    const admission = await deps.payments[req.spec.paymentMode].required({ ...paymentContext(req, worker, t), simulation: sim.value });
    return applyAdmission(req, worker, admission, simulationStatus(sim.value), t);
  }

  /** Hand the persisted operation to the bundler; a retry re-sends the very same operation. */
  async function submit(req: ExecutionRequest, worker: ChainWorker): Promise<ReconcileResult> {
    const op = req.status?.userOperation;
    if (!op) return admitAndSign(req, worker); // queued by a payment step but not signed yet
    await worker.submitOperation(op);
    const t = now();
    return write(req, (s) => ({
      ...s,
      phase: 'Broadcasting',
      submitAttempts: (s.submitAttempts ?? 0) + 1,
      conditions: conditions(s, t, {
        Submitted: ['True', 'BundlerAccepted', ''],
        Succeeded: ['Unknown', 'Broadcasting', ''],
      }),
    }));
  }

  /** The operation's outcome: the one the worker pushed, else asked for (after a restart, or at a poll). */
  async function track(req: ExecutionRequest, worker: ChainWorker): Promise<ReconcileResult> {
    const op = req.status!.userOperation!; // Broadcasting always has one
    const outcome = deps.takePushedOutcome(op.hash) ?? (await worker.getOperationOutcome(op));
    const t = now();
    const s0 = req.status!;
    switch (outcome.state) {
      case 'pending':
        return { requeueAfterMs: pollMs };
      case 'unknown': {
        // Neither the bundler nor the chain has it: the worker restarted, or a reorg removed its inclusion.
        // Either way nothing used its nonce: send the same signed operation again.
        await worker.submitOperation(op);
        const reorged = s0.txHash !== undefined;
        return write(
          req,
          (s) => ({
            ...s,
            submitAttempts: (s.submitAttempts ?? 0) + 1,
            ...(reorged && {
              txHash: undefined,
              blockNumber: undefined,
              blockHash: undefined,
              conditions: conditions(s, t, {
                Submitted: ['True', 'Reorganized', `its inclusion in block ${s.blockNumber} was reorganised away; sent again`],
              }),
            }),
          }),
          { requeueAfterMs: pollMs },
        );
      }
      case 'dropped':
        if (s0.txHash === undefined) return fail(req, { code: outcome.code, message: outcome.message });
        // Its inclusion is gone and can never come back: the status must not keep pointing at it.
        return fail(
          req,
          { code: outcome.code, message: `its inclusion in block ${s0.blockNumber} was reorganised away, then: ${outcome.message}` },
          {},
          { txHash: undefined, blockNumber: undefined, blockHash: undefined },
        );
      case 'included': {
        if (outcome.confirmations < outcome.requiredConfirmations) {
          // In a block, not yet final. Record where (GET /status shows the tx hash) once per inclusion, then look
          // again: each look checks the block still holds it.
          const progress = `${outcome.confirmations} of ${outcome.requiredConfirmations} confirmations`;
          if (s0.blockHash === outcome.blockHash) return { requeueAfterMs: inclusionPollMs };
          return write(
            req,
            (s) => ({
              ...s,
              txHash: outcome.txHash,
              blockNumber: outcome.blockNumber,
              blockHash: outcome.blockHash,
              conditions: conditions(s, t, { Submitted: ['True', 'Included', `in block ${outcome.blockNumber}; ${progress}`] }),
            }),
            { requeueAfterMs: inclusionPollMs },
          );
        }
        const success = outcome.success;
        // The auto transfer rode in the operation: a reverted operation reverted it too, so nothing was charged.
        const charged = !success && s0.payment?.paid?.method === 'auto' ? { costUsd: 0 } : {};
        return write(req, (s) => ({
          ...s,
          ...charged,
          phase: success ? 'Confirmed' : 'Reverted',
          txHash: outcome.txHash,
          blockNumber: outcome.blockNumber,
          blockHash: outcome.blockHash,
          gasUsed: outcome.actualGasUsed,
          actualGasCostWei: outcome.actualGasCostWei,
          completionTime: t.toISOString(),
          ...(!success && {
            failure: withProtocolError(req, {
              code: 'execution_reverted',
              message: outcome.revertReason ?? 'the call reverted on chain',
              ...(outcome.revertReason !== undefined && { revertReason: outcome.revertReason }),
              ...(outcome.revertData !== undefined && { revertData: outcome.revertData }),
            }),
          }),
          conditions: conditions(s, t, {
            Succeeded: success
              ? ['True', 'Confirmed', `included in block ${outcome.blockNumber}; ${outcome.confirmations} confirmations`]
              : ['False', 'Reverted', outcome.revertReason ?? 'the call reverted on chain'],
          }),
        }));
      }
    }
  }

  /**
   * A finished request whose transaction was not found in the block its status names: what has its inclusion
   * become (inclusionJudge.ts)? Each outcome is one status write, recorded in status.inclusionChanges and a
   * condition; leaving the terminal phase records the event execution.inclusion_lost (write → eventLog).
   */
  async function recheckInclusion(req: ExecutionRequest, worker: ChainWorker): Promise<ReconcileResult> {
    const { namespace = 'default', name } = req.metadata;
    const settle = (r: ReconcileResult): ReconcileResult => {
      deps.inclusionSuspects?.delete(namespace, name);
      return r;
    };
    const s0 = req.status!;
    if (!s0.userOperation || s0.txHash === undefined || (s0.phase !== 'Confirmed' && s0.phase !== 'Reverted')) return settle({ done: true });
    const verdict = await judgeInclusion(req, worker, deps.payments[req.spec.paymentMode]);
    const t = now();
    const time = t.toISOString();
    switch (verdict.kind) {
      case 'intact':
        return settle({ done: true });
      case 'wait':
        return { requeueAfterMs: verdict.ms };
      case 'moved': {
        const o = verdict.outcome;
        const detail =
          o.blockNumber === s0.blockNumber
            ? `block ${s0.blockNumber} was replaced by another (${o.blockHash}) that includes it again (transaction ${o.txHash})`
            : `its inclusion moved from block ${s0.blockNumber} to block ${o.blockNumber} (transaction ${o.txHash}): the chain included it again`;
        deps.onInclusionChange?.(req, 'moved', verdict.paymentLost === undefined ? detail : `${detail}; but ${verdict.paymentLost}`);
        return settle(
          await write(req, (s) => ({
            ...s,
            txHash: o.txHash,
            blockNumber: o.blockNumber,
            blockHash: o.blockHash,
            gasUsed: o.actualGasUsed,
            actualGasCostWei: o.actualGasCostWei,
            inclusionChanges: recordChange(s, { kind: 'Moved', newTxHash: o.txHash, newBlockNumber: o.blockNumber, newBlockHash: o.blockHash, time }),
            conditions: conditions(s, t, {
              Submitted: ['True', 'InclusionMoved', detail],
              ...(verdict.paymentLost !== undefined && { PaymentSatisfied: ['False', 'PaymentLost', verdict.paymentLost] as [Status, string, string] }),
            }),
          })),
        );
      }
      case 'reopen': {
        const o = verdict.outcome;
        deps.onInclusionChange?.(req, 'resent', verdict.why);
        // The auto transfer rides in the operation: sent again with it, it is charged again if it succeeds.
        const auto = s0.payment?.paid?.method === 'auto' && s0.payment.quote !== undefined ? { costUsd: s0.payment.quote.amountUsd } : {};
        return settle(
          await write(req, (s) => ({
            ...s,
            ...auto,
            phase: 'Broadcasting',
            txHash: o?.txHash,
            blockNumber: o?.blockNumber,
            blockHash: o?.blockHash,
            gasUsed: undefined,
            actualGasCostWei: undefined,
            completionTime: undefined,
            failure: undefined,
            inclusionChanges: recordChange(s, { kind: 'Lost', time }),
            conditions: conditions(s, t, {
              Submitted: ['True', 'InclusionLost', verdict.why],
              Succeeded: ['Unknown', 'InclusionLost', verdict.why],
            }),
          })),
        );
      }
      case 'fail': {
        const code = verdict.failure.code;
        deps.onInclusionChange?.(req, code === 'payment_lost' ? 'payment_lost' : 'inclusion_lost', verdict.failure.message);
        const lost = {
          txHash: undefined,
          blockNumber: undefined,
          blockHash: undefined,
          gasUsed: undefined,
          actualGasCostWei: undefined,
          inclusionChanges: recordChange(s0, { kind: 'Lost', time }),
        };
        const submitted: [Status, string, string] = ['False', 'InclusionLost', verdict.failure.message];
        if (code !== 'payment_lost') {
          // Not executed: an auto fee rode in the operation and is not charged; a payment by transfer still on chain
          // stays the caller's, as fail() leaves it (a credit).
          const charged = s0.payment?.paid?.method === 'auto' ? { costUsd: 0 } : {};
          return settle(await fail(req, verdict.failure, { Submitted: submitted }, { ...charged, ...lost }));
        }
        // The payment is gone with the inclusion: nothing was paid, nothing is charged, and no credit is left.
        return settle(
          await write(req, (s) => ({
            ...s,
            ...lost,
            costUsd: 0,
            phase: 'Failed',
            failure: verdict.failure,
            completionTime: time,
            conditions: conditions(s, t, {
              Submitted: submitted,
              PaymentSatisfied: ['False', 'PaymentLost', verdict.failure.message],
              Succeeded: ['False', 'PaymentLost', verdict.failure.message],
            }),
          })),
        );
      }
    }
  }

  function fail(
    req: ExecutionRequest,
    failure: Failure,
    extra: Record<string, [Status, string, string]> = {},
    fields: Partial<ExecutionRequestStatus> = {},
  ): Promise<ReconcileResult> {
    const t = now();
    return write(req, (s) => {
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

  async function readStored(req: ExecutionRequest): Promise<ExecutionRequest | undefined> {
    try {
      return await deps.store.get('ExecutionRequest', req.metadata.name, req.metadata.namespace);
    } catch (e) {
      if (isStoreError(e, 'NotFound')) return undefined;
      throw e;
    }
  }

  /**
   * Writes the next status computed from the current one, with the resourceVersion it was read at. On a
   * conflict (someone else wrote since) we re-read and re-apply only if the phase has not moved meanwhile;
   * otherwise the next reconcile decides.
   */
  async function write(
    req: ExecutionRequest,
    next: (s: ExecutionRequestStatus) => ExecutionRequestStatus,
    result: ReconcileResult = { done: true },
    opts: { evenIfSpecMoved?: boolean } = {},
  ): Promise<ReconcileResult> {
    let current = req;
    for (let attempt = 0; attempt < 5; attempt++) {
      // A transition that owes the callback URL an event records it in this same write (src/webhooks/eventLog.ts).
      const status = withTransitionEvent(current, next({ ...(current.status ?? {}) }));
      status.observedGeneration = current.metadata.generation;
      try {
        await deps.store.updateStatus({ ...current, status });
        return result;
      } catch (e) {
        if (!isStoreError(e, 'Conflict')) throw e;
        const fresh = await readStored(req);
        // Moved on (another phase, or a new payment attached): what we computed is stale; decide again once the
        // cache has caught up.
        const specMoved = fresh !== undefined && fresh.metadata.generation !== req.metadata.generation && opts.evenIfSpecMoved !== true;
        if (!fresh || fresh.status?.phase !== req.status?.phase || specMoved) return { requeueAfterMs: CACHE_CATCH_UP_MS };
        current = fresh;
      }
    }
    throw new Error(`status of ${req.metadata.name} kept conflicting`);
  }

  return { reconcile };
}

type Status = 'True' | 'False' | 'Unknown';

function conditions(
  s: ExecutionRequestStatus,
  t: Date,
  changes: Partial<Record<keyof typeof CONDITION, [Status, string, string]>>,
) {
  let list = s.conditions ?? [];
  for (const [type, [status, reason, message]] of Object.entries(changes)) {
    list = setCondition(list, { type, status, reason, message }, t);
  }
  return list;
}

function simulationStatus(sim: SimulationResult): Pick<ExecutionRequestStatus, 'smartWalletAddress' | 'estimatedGas' | 'estimatedCostUsd'> {
  return {
    smartWalletAddress: sim.wallet.address,
    estimatedGas: Number(sim.estimatedGas),
    estimatedCostUsd: sim.estimatedCostUsd,
  };
}

const paidMessage = (p: PaymentRecord): string =>
  `${p.method}: ${p.amountRaw} raw ${p.token} from ${p.payer}${p.txHash ? ` in ${p.txHash}` : ''}`;

/** simulation_reverted → SimulationReverted: condition reasons are CamelCase. */
const camel = (code: string): string =>
  code
    .split(/[_\s-]+/)
    .filter(Boolean)
    .map((w) => w[0]!.toUpperCase() + w.slice(1))
    .join('');
