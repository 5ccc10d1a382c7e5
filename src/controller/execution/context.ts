import type { AgentPolicy, ApiClient, ExecutionRequest } from '../../api/v1alpha1/index.ts';
import type { PolicyDecision, PriceSource } from '../../policy/index.ts';
import type { ChainWorker, OperationOutcome } from '../../chain/types.ts';
import type { ChainName } from '../../config/chains.ts';
import type { InclusionChangeResult } from '../../metrics/registry.ts';
import type { AutoFee, Credit, PaymentContext, PaymentPolicies } from '../../payments/types.ts';
import type { HeldAmounts } from '../../payments/uniqueAmounts.ts';
import type { ResourceStore } from '../../store/types.ts';
import type { SpendLedger } from './admission/spendLedger.ts';
import type { AdmissionStep } from './admission/types.ts';
import type { InclusionSuspects } from './inclusionAudit.ts';
import type { ReplanDeps } from './replan.ts';

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
  /** The request as the shared informer has it (deep-frozen: read it, build new objects), or undefined once gone. */
  cached(namespace: string, name: string): ExecutionRequest | undefined;
  /** The AgentPolicies of a key (from the shared cache): admission's policy step and the kill switch read them. */
  policiesFor?(apiClient: string): readonly AgentPolicy[];
  /** Each chain's USD prices (src/policy/prices): what the policies' USD rules value outflows with. Default: none (unpriced). */
  prices?: ReadonlyMap<ChainName, PriceSource>;
  /** Told each policy decision admission or the kill switch makes (for the metric and the decision log). */
  onPolicyDecision?(request: ExecutionRequest, decision: PolicyDecision): void;
  /** What each budget window holds (admission/spendLedger.ts): the budget step reserves in it. */
  spendLedger?: SpendLedger;
  /** USD per native coin of a chain, to value gas and native outflows against budgets. */
  nativeUsdPrice?(chain: ChainName): number | undefined;
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
  /**
   * How long after handing an operation on the Broadcasting status waits for its outcome (default 1 s): one that
   * is final by then goes from Queued straight to its terminal phase in one write, its history still recording
   * when it was broadcast (phases/submit.ts). A longer wait writes Broadcasting, as before.
   */
  broadcastingAfterMs?: number;
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
  /** The admission steps, in order (admission/steps.ts). Default DEFAULT_ADMISSION: simulation, then payment. */
  admission?: readonly AdmissionStep[];
  /** What a protocol action's family needs to plan again at signing (replan.ts). Default: no re-plan. */
  replan?: ReplanDeps;
}

/** Where an unexpected error failed a request: admitting it, or judging its payment. */
export type InternalErrorStep = 'admission' | 'payment';

/** What every phase of the reconciler works with: its dependencies, its clock and settings, the admission steps. */
export interface Reconciling {
  deps: ExecutionReconcilerDeps;
  now(): Date;
  /** How long a Broadcasting request waits for a pushed outcome before asking the worker again. */
  pollMs: number;
  broadcastingAfterMs: number;
  /** Operations this process handed on from Queued and when (ms), until their next look writes what followed. */
  handedOn: Map<string, number>;
  inclusionPollMs: number;
  paymentGraceMs: number;
  admissionRetryMs: number;
  admissionTimeoutMs: number;
  admission: readonly AdmissionStep[];
  /** What a payment policy is told about the request (besides the simulation). */
  paymentContext(request: ExecutionRequest, worker: ChainWorker, t: Date): PaymentContext;
}
