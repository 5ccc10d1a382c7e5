import { decodeEventLog, isAddressEqual, parseAbi, type Address, type Hex } from 'viem';
import type { PaymentProof, PaymentQuote } from '../api/v1alpha1/index.ts';
import type { TransactionReceiptInfo } from '../chain/types.ts';
import type { ChainName } from '../config/chains.ts';
import { err, ok, type Result } from '../lib/result.ts';

/**
 * Why a payment proof (spec §2.5, `X-Payment-Proof`) is refused: one machine-readable reason per cause of spec
 * §4.2 rule 2, each under `error: payment_verification_failed`. `retryable` ones may pass later with the same
 * proof (the transaction is not mined or not deep enough yet); the others need a different payment.
 */
export const PROOF_REASONS = [
  'chain_mismatch', // the proof names another chain than the request's
  'token_not_accepted', // the token is not accepted for payment on that chain
  'tx_not_found', // no such transaction (yet): retryable
  'tx_failed', // the transaction reverted
  'no_token_transfer', // it moved none of the named token
  'wrong_recipient', // the named token went elsewhere than the treasury
  'wrong_payer', // the transfer to the treasury came from another address than `payer`
  'amount_insufficient', // less than required_amount_raw of that token
  'amount_mismatch', // not exactly required_amount_raw (an unsigned proof pays only the exact amount of its quote)
  'paid_before_quote', // mined before the quote was made (an unsigned proof pays only a transfer made for its quote)
  'paid_after_quote', // mined after the quote's hold on its amount ended
  'signature_invalid', // the proof's signature is not the payer's over the proof message
  'insufficient_confirmations', // not deep enough yet: retryable
  'tx_already_used', // this transfer paid for another request already (any key's), or the service sent it
  'quote_expired', // the quote it answers is no longer valid: a fresh 402 carries a new one
] as const;
export type ProofReason = (typeof PROOF_REASONS)[number];

export interface ProofRejection {
  reason: ProofReason;
  message: string;
  retryable: boolean;
  /** insufficient_confirmations: how many more blocks it needs. */
  confirmationsRemaining?: number;
}

/** What a chain takes, as a proof is judged against it: the amounts are the quotes' (matchQuote). */
export interface ProofTerms {
  chain: ChainName;
  treasury: Address;
  /** Accepted tokens on the chain, by symbol (a Map: a caller's symbol is looked up). */
  tokens: ReadonlyMap<string, { address: Address }>;
  requiredConfirmations: number;
}

/**
 * The transfer a proof presents: Transfers of the named token from the payer to the treasury in one transaction,
 * named by the position of the first in the transaction's logs. verifyProofTransfer gives all of them as one (a
 * payment split in two counts whole); candidatesOf splits them, so one transaction can pay two quotes.
 */
export interface ProvenTransfer {
  token: string;
  tokenAddress: Address;
  payer: Address;
  amountRaw: bigint;
  /** Position in the transaction's logs (not the block's: that moves if a reorg puts it in another block). */
  logIndex: number;
  /** Positions of every log counted. */
  logIndexes: number[];
  /** Each log counted, with what it moved. */
  parts: { logIndex: number; amountRaw: bigint }[];
  txHash: Hex;
  blockNumber: bigint;
  blockTimestamp: bigint;
}

const transferAbi = parseAbi(['event Transfer(address indexed from, address indexed to, uint256 value)']);

/** An ERC-20 Transfer log of a receipt, at its position in the transaction's logs. */
export interface Transfer {
  position: number;
  token: Address;
  from: Address;
  to: Address;
  value: bigint;
}

export function transfersOf(receipt: Pick<TransactionReceiptInfo, 'logs'>): Transfer[] {
  const out: Transfer[] = [];
  receipt.logs.forEach((log, position) => {
    try {
      const e = decodeEventLog({ abi: transferAbi, data: log.data, topics: log.topics as [Hex, ...Hex[]], strict: true });
      out.push({ position, token: log.address, from: e.args.from, to: e.args.to, value: e.args.value });
    } catch {
      // not an ERC-20 Transfer (another event, or ERC-721's with a fourth topic)
    }
  });
  return out;
}

export const proofRejection = (reason: ProofReason, message: string, extra: Partial<ProofRejection> = {}): ProofRejection => ({
  reason,
  message,
  retryable: reason === 'tx_not_found' || reason === 'insufficient_confirmations',
  ...extra,
});
const refuse = (reason: ProofReason, message: string, extra: Partial<ProofRejection> = {}): Result<never, ProofRejection> =>
  err(proofRejection(reason, message, extra));

/** The checks that need no chain: the proof names the request's chain and an accepted token. */
export function checkProofTerms(proof: PaymentProof, terms: ProofTerms): Result<{ address: Address }, ProofRejection> {
  if (proof.chain !== terms.chain) return refuse('chain_mismatch', `the proof names ${proof.chain}; the request runs on ${terms.chain}`);
  const token = terms.tokens.get(proof.token);
  if (!token) {
    return refuse('token_not_accepted', `${proof.token} is not accepted on ${terms.chain}; accepted: ${[...terms.tokens.keys()].join(', ')}`);
  }
  return ok(token);
}

/**
 * Judges a payment proof against the chain's terms and the transaction's receipt (undefined: not found), in the
 * order of spec §4.2 rule 2: found, succeeded, moved the named token, to the treasury, from the payer, deep
 * enough. Which quote the transfer pays (its amount and its time) is matchQuote's; single use (the transfer is
 * claimed) is the caller's step: it needs the store.
 */
export function verifyProofTransfer(
  proof: PaymentProof,
  terms: ProofTerms,
  receipt: TransactionReceiptInfo | undefined,
): Result<ProvenTransfer, ProofRejection> {
  const named = checkProofTerms(proof, terms);
  if (!named.ok) return named;
  const token = named.value;
  if (!receipt) return refuse('tx_not_found', `no transaction ${proof.txHash} on ${terms.chain} (yet): check the hash, or retry once it is mined`);
  if (receipt.status !== 'success') return refuse('tx_failed', `transaction ${proof.txHash} reverted: it moved nothing`);

  const ofToken = transfersOf(receipt).filter((t) => isAddressEqual(t.token, token.address));
  if (ofToken.length === 0) return refuse('no_token_transfer', `transaction ${proof.txHash} moved no ${proof.token} (${token.address})`);
  const toTreasury = ofToken.filter((t) => isAddressEqual(t.to, terms.treasury));
  if (toTreasury.length === 0) return refuse('wrong_recipient', `the ${proof.token} of ${proof.txHash} went to ${ofToken[0]!.to}, not the treasury ${terms.treasury}`);
  const fromPayer = toTreasury.filter((t) => isAddressEqual(t.from, proof.payer as Address));
  if (fromPayer.length === 0) return refuse('wrong_payer', `the ${proof.token} paid to the treasury came from ${toTreasury[0]!.from}, not the payer ${proof.payer}`);
  const confirmations = Number(receipt.confirmations);
  if (confirmations < terms.requiredConfirmations) {
    const remaining = terms.requiredConfirmations - confirmations;
    return refuse(
      'insufficient_confirmations',
      `${proof.txHash} has ${confirmations} of the ${terms.requiredConfirmations} confirmations ${terms.chain} requires; retry after ${remaining} more block(s)`,
      { confirmationsRemaining: remaining },
    );
  }
  return ok({
    token: proof.token,
    tokenAddress: token.address,
    payer: proof.payer as Address,
    amountRaw: fromPayer.reduce((sum, t) => sum + t.value, 0n),
    logIndex: fromPayer[0]!.position,
    logIndexes: fromPayer.map((t) => t.position),
    parts: fromPayer.map((t) => ({ logIndex: t.position, amountRaw: t.value })),
    txHash: proof.txHash as Hex,
    blockNumber: receipt.blockNumber,
    blockTimestamp: receipt.blockTimestamp,
  });
}

/**
 * The ways a proven transfer may pay: each of its Transfer logs alone (a transaction that pays two quotes pays each
 * with its own log), then all of them together (a payment split in two). Each is claimed log by log.
 */
export function candidatesOf(t: ProvenTransfer): ProvenTransfer[] {
  const single = t.parts.map((p) => ({ ...t, amountRaw: p.amountRaw, logIndex: p.logIndex, logIndexes: [p.logIndex], parts: [p] }));
  return t.parts.length > 1 ? [...single, t] : single;
}

/** Which of a request's quotes a transfer pays: one of them, none with a reason, or none because the quote expired. */
export type QuoteMatch = { kind: 'paid'; quote: PaymentQuote } | { kind: 'refused'; rejection: ProofRejection } | { kind: 'expired' };

const validAt = (q: PaymentQuote, now: Date): boolean => Date.parse(q.expiresAt) > now.getTime();

/**
 * Which quote of a request (`quotes`: the current one first, then the earlier ones it keeps) a proven transfer
 * pays. Unsigned, the transfer must carry exactly a quote's amount of its token, in a block after the quote was
 * made and no later than its hold on the amount: since no other quote held that amount meanwhile, the transfer
 * was made for this one, and pays it even after it expired. Signed by the payer (`signed`), the transfer is bound
 * by the signature instead: any amount that covers the current, valid quote. A quote of an earlier version (no
 * `fromBlock`) takes any covering amount while valid, as it did.
 */
export function matchQuote(transfer: ProvenTransfer, quotes: readonly PaymentQuote[], opts: { signed: boolean; now: Date }): QuoteMatch {
  const current = quotes[0];
  if (!current) return { kind: 'expired' };
  const amountOf = (q: PaymentQuote): bigint | undefined => {
    const t = q.tokens.find((x) => x.symbol === transfer.token);
    return t === undefined ? undefined : BigInt(t.amountRaw);
  };
  const paid = transfer.amountRaw;
  const refused = (reason: ProofReason, message: string): QuoteMatch => ({ kind: 'refused', rejection: proofRejection(reason, message) });
  const short = (need: bigint) => refused('amount_insufficient', `${transfer.txHash} paid ${paid} raw ${transfer.token}; required ${need}`);

  if (opts.signed) {
    if (!validAt(current, opts.now)) return { kind: 'expired' };
    const need = amountOf(current);
    if (need === undefined) return refused('token_not_accepted', `the quote takes no ${transfer.token}`);
    return paid >= need ? { kind: 'paid', quote: current } : short(need);
  }

  for (const q of quotes) {
    const need = amountOf(q);
    if (need === undefined) continue;
    if (q.fromBlock === undefined || q.reservedUntil === undefined) {
      if (q === current && validAt(q, opts.now) && paid >= need) return { kind: 'paid', quote: q };
      continue;
    }
    const inWindow = transfer.blockNumber > BigInt(q.fromBlock) && Number(transfer.blockTimestamp) * 1000 <= Date.parse(q.reservedUntil);
    if (paid === need && inWindow) return { kind: 'paid', quote: q };
  }

  if (!validAt(current, opts.now)) return { kind: 'expired' };
  const need = amountOf(current);
  if (need === undefined) return refused('token_not_accepted', `the quote takes no ${transfer.token}`);
  if (paid < need) return short(need);
  if (current.fromBlock === undefined) return short(need); // unreachable: a legacy quote took any covering amount above
  if (transfer.blockNumber <= BigInt(current.fromBlock)) {
    return refused(
      'paid_before_quote',
      `${transfer.txHash} was mined in block ${transfer.blockNumber}, before this quote was made (after block ${current.fromBlock}): ` +
        'an unsigned proof pays only a transfer made for its quote (sign the proof to use an earlier transfer, docs/payments.md)',
    );
  }
  if (paid !== need) {
    return refused(
      'amount_mismatch',
      `${transfer.txHash} paid ${paid} raw ${transfer.token}; this quote asks exactly ${need}: an unsigned proof pays only the exact ` +
        'required_amount_raw of the quote it was made for (or sign the proof, docs/payments.md)',
    );
  }
  return refused('paid_after_quote', `${transfer.txHash} was mined after ${current.reservedUntil}, when this quote's hold on its amount ended`);
}
