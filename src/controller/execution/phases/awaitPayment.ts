import type { ExecutionRequest } from '../../../api/v1alpha1/index.ts';
import type { ChainWorker } from '../../../chain/types.ts';
import type { ReconcileResult } from '../../../runtime/index.ts';
import { isStoreError } from '../../../store/types.ts';
import type { Reconciling } from '../context.ts';
import { keyChangeFor, type KeyTerms } from '../keyChange.ts';
import { CACHE_CATCH_UP_MS, camel, conditions, fail, paidMessage, write } from '../status.ts';
import { requote } from './admit.ts';

/** Waiting for a payment, as its key now has it: revoked, or another mode, ends the wait at once (keyChange.ts). */
export async function waitForPayment(r: Reconciling, namespace: string, req: ExecutionRequest, worker: ChainWorker): Promise<ReconcileResult> {
  const change = keyChangeFor(req, r.deps.apiClient?.(namespace, req.spec.apiClient));
  switch (change.kind) {
    case 'revoked':
      return fail(r, req, change.failure, { PaymentSatisfied: ['False', 'KeyRevoked', change.failure.message] });
    case 'follow':
      return followKey(r, req, worker, change.terms);
    case 'requote':
      return requote(r, req, worker, r.now());
    case 'judgeFirst': {
      // The verdict written, look again: the key's change is acted on once the cache has it.
      const judged = await awaitPayment(r, req, worker);
      return 'done' in judged ? { requeueAfterMs: CACHE_CATCH_UP_MS } : judged;
    }
    case 'none':
      return awaitPayment(r, req, worker);
  }
}

/**
 * Waiting for a payment. A payment attached since the last look (the spec's generation moved) is verified
 * against the stored quote: paid → PaymentVerified; refused → the reason is recorded for that generation (the
 * gateway answers 402 payment_verification_failed) and the request keeps waiting; quote expired → quoted
 * afresh (a new 402). Nothing attached: nothing to do.
 */
async function awaitPayment(r: Reconciling, req: ExecutionRequest, worker: ChainWorker): Promise<ReconcileResult> {
  const s0 = req.status!;
  const generation = req.metadata.generation ?? 0;
  if (!s0.payment?.quote) return { done: true };
  if (generation <= (s0.observedGeneration ?? 0)) {
    // Nothing new attached. A request nobody pays for must still end (spec §3): once its quote has expired
    // and a grace for a payment on its way has passed, it fails; until then, look again at that moment.
    const left = Date.parse(s0.payment.quote.expiresAt) + r.paymentGraceMs - r.now().getTime();
    if (left > 0) return { requeueAfterMs: left };
    return fail(r, req, {
      code: 'payment_not_received',
      message: `no payment was verified before the quote expired at ${s0.payment.quote.expiresAt}; send the request again for a new quote`,
    });
  }
  const t = r.now();
  const quotes = [s0.payment.quote, ...(s0.payment.earlierQuotes ?? [])];
  const verdict = await r.deps.payments[req.spec.paymentMode].verify(r.paymentContext(req, worker, t), quotes);
  switch (verdict.kind) {
    case 'verified':
      // A claimed payment is a fact: recorded even if another payment was attached meanwhile (that one is
      // answered as a replay), so no claim is left without the request it paid for. The quote it paid (an
      // earlier one, when the transfer was made for that) is what the request costs.
      return write(
        r,
        req,
        (s) => ({
          ...s,
          phase: 'PaymentVerified',
          payment: { ...s.payment, quote: verdict.quote ?? s.payment?.quote, paid: verdict.paid, rejection: undefined },
          conditions: conditions(s, t, {
            PaymentSatisfied: ['True', 'PaymentVerified', paidMessage(verdict.paid)],
            Succeeded: ['Unknown', 'PaymentVerified', ''],
          }),
        }),
        { done: true },
        { evenIfSpecMoved: true },
      );
    case 'rejected':
      return write(r, req, (s) => ({
        ...s,
        payment: { ...s.payment, rejection: { ...verdict.rejection, observedGeneration: generation } },
        conditions: conditions(s, t, { PaymentSatisfied: ['False', camel(verdict.rejection.reason), verdict.rejection.message] }),
      }));
    case 'expired':
      // The 402 the caller gets carries the new quote and says why.
      return requote(r, req, worker, t, { reason: 'quote_expired', message: `the quote expired at ${s0.payment.quote.expiresAt}; pay the new one`, retryable: false });
  }
}

/**
 * The key of a waiting request has another payment mode now: the request takes the key's terms (a spec write,
 * detaching the payment already judged, so a moved spec with none attached reads as "quote again"), then is
 * quoted under them.
 */
async function followKey(r: Reconciling, req: ExecutionRequest, worker: ChainWorker, terms: KeyTerms): Promise<ReconcileResult> {
  let moved: ExecutionRequest;
  try {
    moved = await r.deps.store.update({ ...req, spec: { ...req.spec, ...terms, paymentProof: undefined, x402Payment: undefined } });
  } catch (e) {
    // A payment attached meanwhile: judged first, once the cache has it.
    if (isStoreError(e, 'Conflict')) return { requeueAfterMs: CACHE_CATCH_UP_MS };
    throw e;
  }
  return requote(r, moved, worker, r.now());
}
