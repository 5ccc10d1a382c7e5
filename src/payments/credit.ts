import { creditClaimName, type ExecutionRequest, type PaymentQuote, type PaymentRecord } from '../api/v1alpha1/index.ts';
import type { ResourceStore } from '../store/types.ts';
import { claimPayment } from './claim.ts';
import type { Admission, Credit } from './types.ts';

/**
 * A payment is never lost: a request that was paid (a proof, an x402 settlement) and then failed without
 * executing — its calls revert when it is signed, its operation was dropped — keeps the payment as a credit for a
 * day. The next request of the same key and agent_id that costs no more is paid by it instead of a 402, once:
 * the credit is claimed (a PaymentReceipt named after the request that left it) before it pays.
 */
export const CREDIT_TTL_MS = 24 * 60 * 60 * 1000;

/** The credit a request leaves when it fails now, if it leaves one: paid from outside, nothing executed. */
export function creditLeftBy(request: ExecutionRequest, failedAt: Date): NonNullable<NonNullable<ExecutionRequest['status']>['payment']>['credit'] {
  const p = request.status?.payment;
  if (!p?.paid || p.credit !== undefined) return p?.credit;
  if (p.paid.method !== 'proof' && p.paid.method !== 'x402' && p.paid.method !== 'credit') return undefined; // auto pays inside its operation
  return { amountUsd: p.quote?.amountUsd ?? 0, expiresAt: new Date(failedAt.getTime() + CREDIT_TTL_MS).toISOString() };
}

/** A request's unused credit, as the payment policies are told of it. */
export function creditOf(r: ExecutionRequest): Credit | undefined {
  const p = r.status?.payment;
  if (r.status?.phase !== 'Failed' || !p?.credit || p.credit.usedBy !== undefined || !p.paid) return undefined;
  return { request: r.metadata.name, amountUsd: p.credit.amountUsd, expiresAt: p.credit.expiresAt, paid: p.paid };
}

/**
 * Pays `quote` with the first credit that covers it and is still valid, claiming it for `request`; undefined when
 * none does (or each was claimed by another request meanwhile).
 */
export async function payWithCredit(
  store: ResourceStore,
  namespace: string,
  request: ExecutionRequest,
  quote: PaymentQuote,
  credits: readonly Credit[],
  now: Date,
): Promise<Admission | undefined> {
  for (const c of credits) {
    if (Date.parse(c.expiresAt) <= now.getTime() || c.amountUsd < quote.amountUsd) continue;
    const name = creditClaimName(c.request);
    const claim = await claimPayment(store, namespace, name, {
      chain: request.spec.chain,
      method: 'credit',
      token: c.paid.token,
      payer: c.paid.payer,
      amountRaw: c.paid.amountRaw,
      apiClient: request.spec.apiClient,
      requestId: request.metadata.name,
      requestUid: request.metadata.uid,
    });
    if (!claim.claimed) continue;
    const paid: PaymentRecord = { ...c.paid, method: 'credit', receipt: name, creditOf: c.request, verifiedTime: now.toISOString() };
    return { kind: 'satisfied', reason: 'PaidByCredit', costUsd: c.amountUsd, quote, paid };
  }
  return undefined;
}
