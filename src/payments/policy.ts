import type { ExecutionRequest, Failure, PaymentMode } from '../api/v1alpha1/index.ts';
import type { SimulationResult } from '../chain/types.ts';

/**
 * The seam between the execution controller and payment handling (spec §2.6). The controller asks the
 * policy of the request's mode what to do once simulation has succeeded:
 * - `satisfied`: execution may be queued now; `costUsd` is what the caller is charged.
 * - `required`: stop in PaymentRequired with this quote (manual mode without a valid proof).
 * - `refused`: the request fails with this failure (proof rejected, auto transfer impossible).
 * Manual and auto are built in the payments issue; until then they refuse with `payment_mode_unavailable`
 * (the gateway refuses such keys before creating anything, so this is a second line of defence).
 */
export type PaymentDecision =
  | { kind: 'satisfied'; reason: string; costUsd: number }
  | { kind: 'required'; amountUsd: number }
  | { kind: 'refused'; failure: Failure };

export interface PaymentPolicy {
  readonly mode: PaymentMode;
  /** False while the mode is not built: the gateway then refuses such keys before creating anything. */
  readonly available: boolean;
  decide(request: ExecutionRequest, simulation: SimulationResult): Promise<PaymentDecision>;
}

export const sponsoredPolicy: PaymentPolicy = {
  mode: 'sponsored',
  available: true,
  decide: async () => ({ kind: 'satisfied', reason: 'Sponsored', costUsd: 0 }),
};

const unavailable = (mode: PaymentMode): PaymentPolicy => ({
  mode,
  available: false,
  decide: async () => ({
    kind: 'refused',
    failure: { code: 'payment_mode_unavailable', message: `payment mode '${mode}' is not available on this deployment yet` },
  }),
});

export type PaymentPolicies = Readonly<Record<PaymentMode, PaymentPolicy>>;

export const defaultPaymentPolicies = (): PaymentPolicies => ({
  sponsored: sponsoredPolicy,
  manual: unavailable('manual'),
  auto: unavailable('auto'),
});

