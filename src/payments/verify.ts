import { isAddressEqual, type Address, type Hex } from 'viem';
import {
  transactionClaimName,
  transferClaimName,
  type ExecutionRequest,
  type PaymentQuote,
  type PaymentReceipt,
  type PaymentRecord,
  type PaymentRejection,
} from '../api/v1alpha1/index.ts';
import type { ChainWorker, TransactionReceiptInfo } from '../chain/types.ts';
import type { Logger } from '../lib/logger.ts';
import { err } from '../lib/result.ts';
import type { ResourceStore } from '../store/types.ts';
import { claimAll, claimOf, claimPayment, claimedOperationOf, type ClaimResult } from './claim.ts';
import { candidatesOf, matchQuote, transfersOf, verifyProofTransfer, type ProofTerms } from './proof.ts';
import { isPayerSignature, proofMessage } from './proofSignature.ts';
import { quoteValid } from './quote.ts';
import type { ChainPaymentTerms } from './types.ts';
import {
  authorizationClaimName,
  authorizationIdentity,
  authorizationsUsedIn,
  decodePaymentSignature,
  matchOffer,
  paymentRequirements,
  X402_REASON,
  type AuthorizationIdentity,
  type X402Facilitator,
  type X402Refusal,
} from './x402/index.ts';
import { x402Offer } from './x402/offer.ts';

/** What verifying the payment attached to a request concluded. */
export type PaymentVerdict =
  /** Paid and claimed; `quote` is the quote it paid (the current one, or an earlier one the transfer was made for). */
  | { kind: 'verified'; paid: PaymentRecord; quote?: PaymentQuote }
  | { kind: 'rejected'; rejection: Omit<PaymentRejection, 'observedGeneration'> }
  /** The quote the payment answers has expired: quote again (a fresh 402), judge nothing. */
  | { kind: 'expired' };

export interface PaymentVerifierDeps {
  store: ResourceStore;
  namespace: string;
  terms(chain: ExecutionRequest['spec']['chain']): ChainPaymentTerms;
  /** The in-process x402 facilitator; without it PAYMENT-SIGNATURE payments are refused (x402 is not offered). */
  x402?: X402Facilitator | undefined;
  /**
   * The service's sending accounts besides the chain workers' executors and the x402 settler (the faucet's): a
   * transaction one of them sent is never a payment.
   */
  serviceAccounts?: readonly Address[] | undefined;
  /** How far back a settled-but-unrecorded x402 payment is searched for after a crash (blocks). */
  x402LookbackBlocks?: bigint;
  logger: Logger;
}

/** Whether a claim is this request's own (a retry of its verification), not another's nor an earlier one's of its name. */
const isFor = (claim: PaymentReceipt, request: ExecutionRequest): boolean =>
  claim.spec.requestId === request.metadata.name &&
  claim.spec.apiClient === request.spec.apiClient &&
  (claim.spec.requestUid === undefined || claim.spec.requestUid === request.metadata.uid);

const reject = (reason: string, message: string, retryable = false, extra: Partial<PaymentRejection> = {}): PaymentVerdict => ({
  kind: 'rejected',
  rejection: { reason, message, retryable, ...extra },
});

/**
 * Verifies and claims the payment attached to a request awaiting one, against the quotes stored on it: an
 * `X-Payment-Proof` (an on-chain transfer, spec §4.2 rule 2) or an x402 `PAYMENT-SIGNATURE` (an EIP-3009
 * authorization the service settles itself). Either way the payment is claimed — its PaymentReceipt created if
 * absent — before the verdict says `verified`, and the request is queued only after: one payment pays for one
 * request, across every key and replica.
 *
 * `quotes` are the request's current quote first, then the earlier ones it keeps (a transfer made for one of those
 * in its window still pays).
 */
export function createPaymentVerifier(deps: PaymentVerifierDeps) {
  async function verify(request: ExecutionRequest, worker: ChainWorker, quotes: readonly PaymentQuote[], now: Date): Promise<PaymentVerdict> {
    const quote = quotes[0];
    if (!quote) return { kind: 'expired' };
    if (request.spec.x402Payment !== undefined) return quoteValid(quote, now) ? verifyX402(request, worker, quote) : { kind: 'expired' };
    if (request.spec.paymentProof !== undefined) return verifyProof(request, worker, quotes, now);
    return quoteValid(quote, now) ? reject('no_payment', 'no payment is attached to the request') : { kind: 'expired' };
  }

  /** The accounts whose transactions are the service's own: the worker's (executors, x402 settler), the configured ones. */
  async function sentByService(from: Address, worker: ChainWorker): Promise<boolean> {
    const own = [...(await worker.senders()), ...(deps.serviceAccounts ?? [])];
    return own.some((a) => a.toLowerCase() === from.toLowerCase());
  }

  async function verifyProof(request: ExecutionRequest, worker: ChainWorker, quotes: readonly PaymentQuote[], now: Date): Promise<PaymentVerdict> {
    const proof = request.spec.paymentProof!;
    const chain = request.spec.chain;
    const chainTerms = deps.terms(chain);
    const current = quotes[0]!;
    const terms: ProofTerms = {
      chain,
      treasury: current.recipient as Address,
      tokens: new Map(current.tokens.map((t) => [t.symbol, { address: t.address as Address }])),
      requiredConfirmations: chainTerms.paymentConfirmations,
    };
    const receipt = await worker.getTransactionReceipt(proof.txHash as Hex);
    const checked = verifyProofTransfer(proof, terms, receipt);
    if (!checked.ok) return { kind: 'rejected', rejection: checked.error };
    const t = checked.value;
    const used = (why: string) => reject('tx_already_used', `transaction ${t.txHash} ${why}: it pays no other request`);

    // What the service sent itself, or claimed when it signed it, was a payment (or a drip) already.
    if (await sentByService(receipt!.from, worker)) return used(`was sent by one of the service's own accounts (${receipt!.from})`);
    const op = claimedOperationOf(chain, receipt!, chainTerms.entryPoint, t.logIndexes);
    if (op !== undefined && (await claimOf(deps.store, deps.namespace, op.claim)) !== undefined) {
      return used(`carries the fee of auto-mode operation ${op.userOpHash}`);
    }
    const whole = await claimOf(deps.store, deps.namespace, transactionClaimName(chain, t.txHash));
    if (whole !== undefined && !isFor(whole, request)) return used(`already paid for request ${whole.spec.requestId}`);
    // An EIP-3009 authorization an x402 payment claimed, spent by this transaction (its payer sent it before the
    // service's settlement could): the x402 request it was signed for is what it pays.
    const authorization = await claimedAuthorizationIn(receipt!, t.tokenAddress, chainTerms.chainId);
    if (authorization !== undefined && !isFor(authorization, request)) return used(`spends the x402 authorization request ${authorization.spec.requestId} claimed`);

    const signed = proof.signature !== undefined;
    if (signed) {
      // A signature binds the transfer to what it names: a proof naming another request (another key's, or one that
      // ended) is never carried over to the request this call makes.
      if (proof.requestId !== undefined && proof.requestId !== request.metadata.name) {
        return reject('signature_invalid', `the signed proof names request ${proof.requestId}; it pays only that request (sign for this one, or name none)`);
      }
      const message = proofMessage({ chain, txHash: t.txHash, client: request.spec.apiClient, requestId: proof.requestId, agentId: request.spec.agentId });
      if (!(await isPayerSignature(worker, t.payer, message, proof.signature as Hex))) {
        return reject('signature_invalid', `the signature is not ${t.payer}'s over the proof message (docs/payments.md: what the payer signs)`);
      }
    }

    // Each log alone first, then the logs together; the first that pays a quote is claimed, log by log.
    let refusal: PaymentVerdict | undefined;
    for (const candidate of candidatesOf(t)) {
      const match = matchQuote(candidate, quotes, { signed, now });
      if (match.kind === 'expired') return match;
      if (match.kind === 'refused') {
        refusal ??= { kind: 'rejected', rejection: match.rejection };
        continue;
      }
      const spec = (logIndex: number) => ({
        chain,
        method: 'proof' as const,
        txHash: candidate.txHash,
        logIndex,
        token: candidate.token,
        payer: candidate.payer,
        amountRaw: candidate.amountRaw.toString(),
        apiClient: request.spec.apiClient,
        requestId: request.metadata.name,
        requestUid: request.metadata.uid,
      });
      const claim = await claimAll(
        deps.store,
        deps.namespace,
        candidate.logIndexes.map((i) => ({ name: transferClaimName(chain, candidate.txHash, i), spec: spec(i) })),
      );
      if (!claim.claimed) {
        refusal = used(`already paid for request ${claim.usedBy}`);
        continue;
      }
      return {
        kind: 'verified',
        quote: match.quote,
        paid: {
          method: 'proof',
          token: candidate.token,
          amountRaw: candidate.amountRaw.toString(),
          payer: candidate.payer,
          txHash: candidate.txHash,
          logIndex: candidate.logIndex,
          receipt: transferClaimName(chain, candidate.txHash, candidate.logIndex),
          verifiedTime: now.toISOString(),
        },
      };
    }
    return refusal!;
  }

  /** Claims a transaction that spent a claimed authorization as the request's: the whole transaction and each transfer. */
  async function claimSpentAuthorization(
    request: ExecutionRequest,
    worker: ChainWorker,
    txHash: Hex,
    identity: AuthorizationIdentity,
    token: string,
    treasury: Address,
  ): Promise<ClaimResult> {
    const receipt = await worker.getTransactionReceipt(txHash);
    const chain = request.spec.chain;
    const spec = {
      chain,
      method: 'x402' as const,
      txHash,
      token,
      payer: identity.from,
      amountRaw: '0',
      apiClient: request.spec.apiClient,
      requestId: request.metadata.name,
      requestUid: request.metadata.uid,
    };
    const transfers = receipt ? transfersOf(receipt).filter((x) => isAddressEqual(x.token, identity.asset) && isAddressEqual(x.to, treasury) && isAddressEqual(x.from, identity.from)) : [];
    return claimAll(deps.store, deps.namespace, [
      { name: transactionClaimName(chain, txHash), spec },
      ...transfers.map((x) => ({ name: transferClaimName(chain, txHash, x.position), spec: { ...spec, logIndex: x.position, amountRaw: x.value.toString() } })),
    ]);
  }

  /** The claim of an x402 authorization the transaction spent (its token's AuthorizationUsed event), if one exists. */
  async function claimedAuthorizationIn(receipt: TransactionReceiptInfo, token: Address, chainId: number): Promise<PaymentReceipt | undefined> {
    for (const used of authorizationsUsedIn(receipt, token, chainId)) {
      const claim = await claimOf(deps.store, deps.namespace, authorizationClaimName(used));
      if (claim !== undefined) return claim;
    }
    return undefined;
  }

  async function verifyX402(request: ExecutionRequest, worker: ChainWorker, quote: PaymentQuote): Promise<PaymentVerdict> {
    const refused = (r: X402Refusal): PaymentVerdict => reject(r.reason, r.message, r.retryable);
    if (!deps.x402) return reject('x402_not_offered', 'this deployment does not settle x402 payments; pay with X-Payment-Proof');
    const decoded = decodePaymentSignature(request.spec.x402Payment!);
    if (!decoded.ok) return refused(decoded.error);
    const offer = x402Offer(quote, deps.terms(request.spec.chain), request.metadata.name, 'urn:agent-wallet:execute');
    if (!offer) return reject('x402_not_offered', 'no quoted token takes x402 on this chain; pay with X-Payment-Proof');
    const matched = matchOffer(decoded.value, paymentRequirements(offer));
    if (!matched.ok) return refused(matched.error);
    const requirement = matched.value;
    const identity = authorizationIdentity(decoded.value, requirement);
    const name = authorizationClaimName(identity);
    const verified = await deps.x402.verify(decoded.value, requirement);
    // Spent already, and claimed by this very request: its settlement was sent by a leader that died before it
    // recorded the result. Not a replay: the chain says which transaction spent it (below).
    const ownSpent = !verified.ok && verified.error.reason === X402_REASON.nonceAlreadyUsed && isOwnClaim(await claimOf(deps.store, deps.namespace, name), request);
    if (!verified.ok && !ownSpent) return refused(verified.error);
    const token = quote.tokens.find((t) => t.address.toLowerCase() === identity.asset.toLowerCase())!;
    const claim = await claimPayment(deps.store, deps.namespace, name, {
      chain: request.spec.chain,
      method: 'x402',
      token: token.symbol,
      payer: identity.from,
      amountRaw: requirement.amount,
      apiClient: request.spec.apiClient,
      requestId: request.metadata.name,
      requestUid: request.metadata.uid,
    });
    if (!claim.claimed) return reject('authorization_already_used', 'this x402 authorization already paid for another request');
    const settled = ownSpent && !verified.ok ? err(verified.error) : await deps.x402.settle(decoded.value, requirement);
    let txHash: Hex | undefined = settled.ok ? settled.value.transaction : undefined;
    if (!settled.ok) {
      // Claimed by this request: a settle that failed because the authorization is spent may be ours, done before
      // a crash that lost its result. The chain tells: find the transfer that spent it.
      const found = await deps.x402.findSettlement(identity, deps.x402LookbackBlocks ?? 10_000n).catch(() => undefined);
      if (!found) return refused(settled.error);
      // Not sent by this settle: ours, lost in a crash (claimed when it was signed), or its payer's own, sent first.
      // Either way the transaction and its transfers are this request's, claimed now, so no proof can present it
      // for another; if a proof already took the transfer, this authorization paid that request instead.
      const taken = await claimSpentAuthorization(request, worker, found, identity, token.symbol, quote.recipient as Address);
      if (!taken.claimed) return reject('authorization_already_used', `the transfer of this x402 authorization (${found}) already paid request ${taken.usedBy}`);
      txHash = found;
    }
    await recordReceiptTx(name, txHash!);
    return {
      kind: 'verified',
      paid: { method: 'x402', token: token.symbol, amountRaw: requirement.amount, payer: identity.from, txHash, receipt: name, verifiedTime: new Date().toISOString() },
    };
  }

  /** Whether a claim is this request's own (as claimPayment judges a retry of the same request). */
  function isOwnClaim(claim: PaymentReceipt | undefined, request: ExecutionRequest): boolean {
    return (
      claim !== undefined &&
      claim.spec.requestId === request.metadata.name &&
      claim.spec.apiClient === request.spec.apiClient &&
      (claim.spec.requestUid === undefined || claim.spec.requestUid === request.metadata.uid)
    );
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
