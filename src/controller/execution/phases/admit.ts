import type { ExecutionRequest, PaymentRejection } from '../../../api/v1alpha1/index.ts';
import type { ChainWorker } from '../../../chain/types.ts';
import type { ReconcileResult } from '../../../runtime/index.ts';
import { runAdmission } from '../admission/steps.ts';
import type { AdmissionInput, Admitted } from '../admission/types.ts';
import type { Reconciling } from '../context.ts';
import { simulationStatus } from '../status.ts';
import { sign } from './sign.ts';

/**
 * A new request: the admission steps in order (simulation, payment, …), then sign (one status write to Queued).
 * A step may stop it instead: failed, waiting for a payment (PaymentRequired with the quote), or paid by a payment
 * that came with it (PaymentVerified, signed on the next look).
 */
export function admitAndSign(r: Reconciling, req: ExecutionRequest, worker: ChainWorker): Promise<ReconcileResult> {
  return admitThenSign(r, { req, worker, t: r.now(), calls: req.spec.calls });
}

/**
 * Quote a waiting request again from a fresh simulation, under its mode as it is now: an admission that needs no
 * payment (sponsored; auto with a covering token) proceeds, else a new quote. Earlier quotes whose amounts are
 * still held are kept: a transfer made for one in time still pays.
 */
export function requote(r: Reconciling, req: ExecutionRequest, worker: ChainWorker, t: Date, rejection?: Omit<PaymentRejection, 'observedGeneration'>): Promise<ReconcileResult> {
  const payment = req.status?.payment;
  const quotes = payment?.quote ? [payment.quote, ...(payment.earlierQuotes ?? [])] : [];
  const earlierQuotes = quotes.filter((q) => q.reservedUntil !== undefined && Date.parse(q.reservedUntil) > t.getTime()).slice(0, 3);
  return admitThenSign(r, { req, worker, t, calls: req.spec.calls, quoteAgain: { earlierQuotes, rejection } });
}

async function admitThenSign(r: Reconciling, input: AdmissionInput): Promise<ReconcileResult> {
  const admitted = await runAdmission(r, input, r.admission);
  if (admitted.kind === 'stopped') return admitted.result;
  return signAdmitted(r, input, admitted.found);
}

/** Sign what admission let through; a wallet short of its auto fee at signing gets the mode's 402 instead. */
async function signAdmitted(r: Reconciling, input: AdmissionInput, found: Admitted): Promise<ReconcileResult> {
  const { req, worker } = input;
  const admission = found.payment!;
  const signed = await sign(r, req, worker, {
    added: admission.calls ?? [],
    costUsd: admission.costUsd,
    reason: admission.reason,
    estimates: simulationStatus(found.simulation!, req.spec.paymentMode),
    value: found.value,
    ...(found.spend && { spend: found.spend }),
    ...((admission.quote || admission.paid) && { payment: { ...(admission.quote && { quote: admission.quote }), ...(admission.paid && { paid: admission.paid }) } }),
  });
  if (!('feeUncovered' in signed)) return signed;
  // The mode's 402 (see PaymentPolicy.required): simulated afresh, the wallet's fee now asked from outside.
  const again = await runAdmission(r, { req, worker, t: r.now(), calls: req.spec.calls, requireFromOutside: true }, r.admission);
  return again.kind === 'stopped' ? again.result : { requeueAfterMs: 1_000 }; // `required` never lets it through
}
