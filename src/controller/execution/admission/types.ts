import type { Call, ExecutionRequest, PaymentQuote, PaymentRejection, SpendReservation } from '../../../api/v1alpha1/index.ts';
import type { CONDITION } from '../../../api/v1alpha1/index.ts';
import type { ChainWorker, SimulationResult } from '../../../chain/types.ts';
import type { Admission } from '../../../payments/types.ts';
import type { Valuation } from '../../../policy/index.ts';
import type { ReconcileResult } from '../../../runtime/index.ts';
import type { Reconciling } from '../context.ts';

/** What admission judges: a request, on its worker, at one time, with the calls to judge. */
export interface AdmissionInput {
  req: ExecutionRequest;
  worker: ChainWorker;
  t: Date;
  /** The request's calls, or those a re-plan at signing derived from its action. */
  calls: readonly Call[];
  /**
   * Quoting a request that waits for a payment again (its quote expired, or its key changed): its attached payment
   * is left out, the quotes whose amounts are still held are kept, and the 402 says why.
   */
  quoteAgain?: { earlierQuotes: PaymentQuote[]; rejection?: Omit<PaymentRejection, 'observedGeneration'> | undefined };
  /** The mode cannot take the payment itself after all (an auto wallet short of its fee): its 402. */
  requireFromOutside?: boolean;
}

/** What the steps that passed found, for the next steps and for signing. */
export interface Admitted {
  simulation?: SimulationResult;
  /**
   * What the execution moves out of the wallet and its worth (src/policy/valuation.ts), when an applicable policy
   * has an outflow or USD rule: the policy step's, for the steps after it and for the judgement at signing.
   */
  value?: Valuation;
  /** The payment policy's answer, when it let the request through (kind `satisfied`). */
  payment?: Extract<Admission, { kind: 'satisfied' }>;
  /** What the budget step held for it: written with the status that admission's outcome writes (waiting or signed). */
  spend?: SpendReservation;
}

export type StepOutcome =
  /** On to the next step, with what this one found. */
  | { kind: 'pass'; found: Admitted }
  /** Admission ends here: the request failed, or waits (for a payment); the status is written. */
  | { kind: 'stop'; result: ReconcileResult };

/**
 * One step of admission, with its own condition on the request. The steps run in order, each on what the earlier
 * ones found; the first that stops ends admission. After all pass, the operation is signed.
 */
export interface AdmissionStep {
  name: 'simulation' | 'policy' | 'budget' | 'payment';
  /** The condition this step sets (`Simulated`, `PolicyAllowed` (the policy and budget steps), `PaymentSatisfied`). */
  condition: keyof typeof CONDITION;
  run(r: Reconciling, input: AdmissionInput, found: Admitted): Promise<StepOutcome>;
}
