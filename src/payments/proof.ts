import { decodeEventLog, isAddressEqual, parseAbi, type Address, type Hex } from 'viem';
import type { PaymentProof } from '../api/v1alpha1/index.ts';
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
  'insufficient_confirmations', // not deep enough yet: retryable
  'tx_already_used', // this transaction paid for another request already (or another key's)
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

/** What a quote asks for, as the proof is judged against it. */
export interface ProofTerms {
  chain: ChainName;
  treasury: Address;
  /** Accepted tokens on the chain, by symbol, with the raw amount each must pay (a Map: a caller's symbol is looked up). */
  tokens: ReadonlyMap<string, { address: Address; amountRaw: bigint }>;
  requiredConfirmations: number;
}

export interface VerifiedTransfer {
  token: string;
  tokenAddress: Address;
  payer: Address;
  amountRaw: bigint;
  txHash: Hex;
  blockNumber: bigint;
}

const transferAbi = parseAbi(['event Transfer(address indexed from, address indexed to, uint256 value)']);

interface Transfer {
  token: Address;
  from: Address;
  to: Address;
  value: bigint;
}

function transfersOf(receipt: TransactionReceiptInfo): Transfer[] {
  const out: Transfer[] = [];
  for (const log of receipt.logs) {
    try {
      const e = decodeEventLog({ abi: transferAbi, data: log.data, topics: log.topics as [Hex, ...Hex[]], strict: true });
      out.push({ token: log.address, from: e.args.from, to: e.args.to, value: e.args.value });
    } catch {
      // not an ERC-20 Transfer (another event, or ERC-721's with a fourth topic)
    }
  }
  return out;
}

const refuse = (reason: ProofReason, message: string, extra: Partial<ProofRejection> = {}): Result<never, ProofRejection> =>
  err({ reason, message, retryable: reason === 'tx_not_found' || reason === 'insufficient_confirmations', ...extra });

/** The checks that need no chain: the proof names the request's chain and an accepted token. */
export function checkProofTerms(proof: PaymentProof, terms: ProofTerms): Result<{ address: Address; amountRaw: bigint }, ProofRejection> {
  if (proof.chain !== terms.chain) return refuse('chain_mismatch', `the proof names ${proof.chain}; the request runs on ${terms.chain}`);
  const token = terms.tokens.get(proof.token);
  if (!token) {
    return refuse('token_not_accepted', `${proof.token} is not accepted on ${terms.chain}; accepted: ${[...terms.tokens.keys()].join(', ')}`);
  }
  return ok(token);
}

/**
 * Judges a payment proof against the quote's terms and the transaction's receipt (undefined: not found), in
 * the order of spec §4.2 rule 2. Several transfers in one transaction are summed, so a payment split in two
 * still counts; only transfers of the named token, from the payer, to the treasury count. Single use (the
 * receipt is claimed) is the caller's step: it needs the store.
 */
export function verifyProofTransfer(
  proof: PaymentProof,
  terms: ProofTerms,
  receipt: TransactionReceiptInfo | undefined,
): Result<VerifiedTransfer, ProofRejection> {
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
  const paid = fromPayer.reduce((sum, t) => sum + t.value, 0n);
  if (paid < token.amountRaw) {
    return refuse('amount_insufficient', `${proof.txHash} paid ${paid} raw ${proof.token}; required ${token.amountRaw}`);
  }
  const confirmations = Number(receipt.confirmations);
  if (confirmations < terms.requiredConfirmations) {
    const remaining = terms.requiredConfirmations - confirmations;
    return refuse(
      'insufficient_confirmations',
      `${proof.txHash} has ${confirmations} of the ${terms.requiredConfirmations} confirmations ${terms.chain} requires; retry after ${remaining} more block(s)`,
      { confirmationsRemaining: remaining },
    );
  }
  return ok({ token: proof.token, tokenAddress: token.address, payer: proof.payer as Address, amountRaw: paid, txHash: proof.txHash as Hex, blockNumber: receipt.blockNumber });
}
