import type { ExecutionRequest, ExecutionRequestStatus, PaymentQuote } from '../../../api/v1alpha1/index.ts';
import type { Admission } from '../../../payments/types.ts';
import type { ReconcileResult } from '../../../runtime/index.ts';
import type { Reconciling } from '../context.ts';
import { simulateOrFail } from '../simulation.ts';
import { needsOutflows } from './policy.ts';
import { conditions, fail, paidMessage, simulationStatus, write, type SimulationEstimates } from '../status.ts';
import type { AdmissionInput, AdmissionStep, Admitted } from './types.ts';
import { inSpan, TRACERS } from '../../../lib/tracing.ts';

/** The calls must succeed from the request's wallet now; a revert fails the request with its (decoded) reason. */
export const simulationStep: AdmissionStep = {
  name: 'simulation',
  condition: 'Simulated',
  async run(r, { req, worker, calls }) {
    // Outflows only when a policy judges them: tracing is one more RPC call.
    const sim = await simulateOrFail(r, req, worker, calls, needsOutflows(r, req) ? { outflows: true } : undefined);
    if (!sim.ok) return { kind: 'stop', result: await sim.failed };
    return { kind: 'pass', found: { simulation: sim.value } };
  },
};

/**
 * The request's payment mode decides (src/payments): satisfied (sponsored, an auto fee, a credit) passes on to
 * signing; a payment required waits (PaymentRequired, the 402's quote); one attached and verified waits to be
 * signed (PaymentVerified); refused fails.
 */
export const paymentStep: AdmissionStep = {
  name: 'payment',
  condition: 'PaymentSatisfied',
  async run(r, input, found) {
    const { req, worker, t } = input;
    const policy = r.deps.payments[req.spec.paymentMode];
    // Quoting again leaves the payment already judged out: a new quote is for a new payment.
    const asked = input.quoteAgain ? { ...req, spec: { ...req.spec, paymentProof: undefined, x402Payment: undefined } } : req;
    const ctx = { ...r.paymentContext(asked, worker, t), simulation: found.simulation! };
    const admission = input.requireFromOutside ? await policy.required(ctx) : await policy.admit(ctx);
    if (admission.kind === 'satisfied') return { kind: 'pass', found: { payment: admission } };
    const withReason = admission.kind === 'required' && input.quoteAgain?.rejection ? { ...admission, rejection: input.quoteAgain.rejection } : admission;
    return { kind: 'stop', result: await recordAdmission(r, req, withReason, { ...simulationStatus(found.simulation!, req.spec.paymentMode), ...(found.spend && { spend: found.spend }) }, t, input.quoteAgain?.earlierQuotes ?? []) };
  },
};

/** What a reconciler made on its own admits with (tests, a controller started alone); the service's list is built in serviceControllers.ts. */
export const DEFAULT_ADMISSION: readonly AdmissionStep[] = [simulationStep, paymentStep];

/** Runs `steps` in order on `input`: what they found when all passed, or the result of the one that stopped. */
export async function runAdmission(
  r: Reconciling,
  input: AdmissionInput,
  steps: readonly AdmissionStep[],
): Promise<{ kind: 'admitted'; found: Admitted } | { kind: 'stopped'; result: ReconcileResult }> {
  let found: Admitted = {};
  for (const step of steps) {
    const outcome = await inSpan(TRACERS.controller, `admission.${step.name}`, () => step.run(r, input, found));
    if (outcome.kind === 'stop') return { kind: 'stopped', result: outcome.result };
    found = { ...found, ...outcome.found };
  }
  return { kind: 'admitted', found };
}

/** The steps that judge calls, not money: what runs again on calls re-planned at signing. */
export const judgingCalls = (steps: readonly AdmissionStep[]) => steps.filter((s) => s.name !== 'payment');

/** The status a payment answer other than `satisfied` leaves: waiting for a payment, paid and waiting to be signed, or failed. */
function recordAdmission(
  r: Reconciling,
  req: ExecutionRequest,
  admission: Exclude<Admission, { kind: 'satisfied' }>,
  estimates: SimulationEstimates & Pick<ExecutionRequestStatus, 'spend'>,
  t: Date,
  earlierQuotes: PaymentQuote[],
): Promise<ReconcileResult> {
  switch (admission.kind) {
    case 'refused':
      return fail(r, req, admission.failure, { Simulated: ['True', 'SimulationSucceeded', ''] });
    case 'required':
      return write(r, req, (s) => ({
        ...s,
        ...estimates,
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
      return write(r, req, (s) => ({
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
  }
}
