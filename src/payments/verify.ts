import type { Address, Hex } from 'viem';
import { paymentReceiptName, type ExecutionRequest, type PaymentQuote, type PaymentRecord, type PaymentRejection } from '../api/v1alpha1/index.ts';
import type { ChainWorker } from '../chain/types.ts';
import type { Logger } from '../lib/logger.ts';
import type { ResourceStore } from '../store/types.ts';
import { claimPayment } from './claim.ts';
import { checkProofTerms, verifyProofTransfer, type ProofTerms } from './proof.ts';
import { quoteValid } from './quote.ts';
import type { ChainPaymentTerms } from './types.ts';
import {
  authorizationClaimName,
  authorizationIdentity,
  decodePaymentSignature,
  matchOffer,
  paymentRequirements,
  type X402Facilitator,
  type X402Refusal,
} from './x402/index.ts';
import { x402Offer } from './x402/offer.ts';

/** What verifying the payment attached to a request concluded. */
export type PaymentVerdict =
  | { kind: 'verified'; paid: PaymentRecord }
  | { kind: 'rejected'; rejection: Omit<PaymentRejection, 'observedGeneration'> }
  /** The quote the payment answers has expired: quote again (a fresh 402), judge nothing. */
  | { kind: 'expired' };

export interface PaymentVerifierDeps {
  store: ResourceStore;
  namespace: string;
  terms(chain: ExecutionRequest['spec']['chain']): ChainPaymentTerms;
  /** The in-process x402 facilitator; without it PAYMENT-SIGNATURE payments are refused (x402 is not offered). */
  x402?: X402Facilitator | undefined;
  /** How far back a settled-but-unrecorded x402 payment is searched for after a crash (blocks). */
  x402LookbackBlocks?: bigint;
  logger: Logger;
}

const reject = (reason: string, message: string, retryable = false, extra: Partial<PaymentRejection> = {}): PaymentVerdict => ({
  kind: 'rejected',
  rejection: { reason, message, retryable, ...extra },
});

/**
 * Verifies and claims the payment attached to a request awaiting one, against the quote stored on it:
 * an `X-Payment-Proof` (an on-chain transfer, spec §4.2 rule 2) or an x402 `PAYMENT-SIGNATURE` (an EIP-3009
 * authorization the service settles itself). Either way the payment is claimed — its PaymentReceipt created if
 * absent — before the verdict says `verified`, and the request is queued only after: one payment pays for one
 * request, across every key and replica.
 */
export function createPaymentVerifier(deps: PaymentVerifierDeps) {
  async function verify(request: ExecutionRequest, worker: ChainWorker, quote: PaymentQuote, now: Date): Promise<PaymentVerdict> {
    if (!quoteValid(quote, now)) return { kind: 'expired' };
    if (request.spec.x402Payment !== undefined) return verifyX402(request, quote);
    if (request.spec.paymentProof !== undefined) return verifyProof(request, worker, quote, now);
    return reject('no_payment', 'no payment is attached to the request');
  }

  async function verifyProof(request: ExecutionRequest, worker: ChainWorker, quote: PaymentQuote, now: Date): Promise<PaymentVerdict> {
    const proof = request.spec.paymentProof!;
    const chainTerms = deps.terms(request.spec.chain);
    const terms: ProofTerms = {
      chain: request.spec.chain,
      treasury: quote.recipient as Address,
      tokens: new Map(quote.tokens.map((t) => [t.symbol, { address: t.address as Address, amountRaw: BigInt(t.amountRaw) }])),
      requiredConfirmations: chainTerms.paymentConfirmations,
    };
    // The checks that need no chain first: a proof for another chain is not looked up on this one.
    const named = checkProofTerms(proof, terms);
    if (!named.ok) return { kind: 'rejected', rejection: named.error };
    const receipt = await worker.getTransactionReceipt(proof.txHash as Hex);
    const checked = verifyProofTransfer(proof, terms, receipt);
    if (!checked.ok) return { kind: 'rejected', rejection: checked.error };
    const t = checked.value;
    const name = paymentReceiptName(request.spec.chain, t.txHash);
    const claim = await claimPayment(deps.store, deps.namespace, name, {
      chain: request.spec.chain,
      method: 'proof',
      txHash: t.txHash,
      token: t.token,
      payer: t.payer,
      amountRaw: t.amountRaw.toString(),
      apiClient: request.spec.apiClient,
      requestId: request.metadata.name,
    });
    if (!claim.claimed) return reject('tx_already_used', `transaction ${t.txHash} already paid for another request`);
    return {
      kind: 'verified',
      paid: { method: 'proof', token: t.token, amountRaw: t.amountRaw.toString(), payer: t.payer, txHash: t.txHash, receipt: name, verifiedTime: now.toISOString() },
    };
  }

  async function verifyX402(request: ExecutionRequest, quote: PaymentQuote): Promise<PaymentVerdict> {
    const refused = (r: X402Refusal): PaymentVerdict => reject(r.reason, r.message, r.retryable);
    if (!deps.x402) return reject('x402_not_offered', 'this deployment does not settle x402 payments; pay with X-Payment-Proof');
    const decoded = decodePaymentSignature(request.spec.x402Payment!);
    if (!decoded.ok) return refused(decoded.error);
    const offer = x402Offer(quote, deps.terms(request.spec.chain), request.metadata.name, 'urn:agent-wallet:execute');
    if (!offer) return reject('x402_not_offered', 'no quoted token takes x402 on this chain; pay with X-Payment-Proof');
    const matched = matchOffer(decoded.value, paymentRequirements(offer));
    if (!matched.ok) return refused(matched.error);
    const requirement = matched.value;
    const verified = await deps.x402.verify(decoded.value, requirement);
    if (!verified.ok) return refused(verified.error);
    const identity = authorizationIdentity(decoded.value, requirement);
    const name = authorizationClaimName(identity);
    const token = quote.tokens.find((t) => t.address.toLowerCase() === identity.asset.toLowerCase())!;
    const claim = await claimPayment(deps.store, deps.namespace, name, {
      chain: request.spec.chain,
      method: 'x402',
      token: token.symbol,
      payer: identity.from,
      amountRaw: requirement.amount,
      apiClient: request.spec.apiClient,
      requestId: request.metadata.name,
    });
    if (!claim.claimed) return reject('authorization_already_used', 'this x402 authorization already paid for another request');
    const settled = await deps.x402.settle(decoded.value, requirement);
    let txHash: Hex | undefined = settled.ok ? settled.value.transaction : undefined;
    if (!settled.ok) {
      // Claimed by this request: a settle that failed because the authorization is spent may be ours, done before
      // a crash that lost its result. The chain tells: find the transfer that spent it.
      const found = await deps.x402.findSettlement(identity, deps.x402LookbackBlocks ?? 10_000n).catch(() => undefined);
      if (!found) return refused(settled.error);
      txHash = found;
    }
    await recordReceiptTx(name, txHash!);
    return {
      kind: 'verified',
      paid: { method: 'x402', token: token.symbol, amountRaw: requirement.amount, payer: identity.from, txHash, receipt: name, verifiedTime: new Date().toISOString() },
    };
  }

  /** The settlement's tx hash on the claim, for audit (`kubectl get awreceipt -o wide`); best effort. */
  async function recordReceiptTx(name: string, txHash: Hex): Promise<void> {
    try {
      const r = await deps.store.get('PaymentReceipt', name, deps.namespace);
      if (r.spec.txHash === undefined) await deps.store.update({ ...r, spec: { ...r.spec, txHash } });
    } catch (err) {
      deps.logger.warn({ err, receipt: name }, 'x402: could not record the settlement on its receipt');
    }
  }

  return { verify };
}
export type PaymentVerifier = ReturnType<typeof createPaymentVerifier>;
