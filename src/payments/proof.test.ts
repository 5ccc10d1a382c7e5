import { describe, expect, it } from 'vitest';
import { encodeAbiParameters, encodeEventTopics, parseAbi, type Address, type Hex } from 'viem';
import type { PaymentProof } from '../api/v1alpha1/index.ts';
import type { TransactionReceiptInfo } from '../chain/types.ts';
import { verifyProofTransfer, type ProofTerms } from './proof.ts';

const USDC: Address = '0x1111111111111111111111111111111111111111';
const AUSD: Address = '0x3333333333333333333333333333333333333333';
const TREASURY: Address = '0x7777777777777777777777777777777777777777';
const PAYER: Address = '0x9999999999999999999999999999999999999999';
const OTHER: Address = '0x8888888888888888888888888888888888888888';
const TX: Hex = `0x${'ab'.repeat(32)}`;

const terms: ProofTerms = {
  chain: 'base',
  treasury: TREASURY,
  tokens: new Map([
    ['USDC', { address: USDC, amountRaw: 650_000n }],
    ['aUSD', { address: AUSD, amountRaw: 650_000n }],
  ]),
  requiredConfirmations: 3,
};
const proof = (p: Partial<PaymentProof> = {}): PaymentProof => ({ payer: PAYER, token: 'USDC', chain: 'base', txHash: TX, ...p });

const transferAbi = parseAbi(['event Transfer(address indexed from, address indexed to, uint256 value)']);
const transfer = (token: Address, from: Address, to: Address, value: bigint, logIndex = 0) => ({
  address: token,
  topics: encodeEventTopics({ abi: transferAbi, eventName: 'Transfer', args: { from, to } }) as Hex[],
  data: encodeAbiParameters([{ type: 'uint256' }], [value]),
  logIndex,
});
const receipt = (logs: TransactionReceiptInfo['logs'], r: Partial<TransactionReceiptInfo> = {}): TransactionReceiptInfo => ({
  transactionHash: TX,
  status: 'success',
  blockNumber: 100n,
  blockHash: `0x${'cd'.repeat(32)}`,
  blockTimestamp: 1_767_225_600n,
  from: PAYER,
  to: USDC,
  logs,
  confirmations: 3n,
  ...r,
});
const reasonOf = (r: ReturnType<typeof verifyProofTransfer>) => (r.ok ? 'ok' : r.error.reason);

describe('a payment proof against its quote and the chain', () => {
  it('accepts a transfer of the named token from the payer to the treasury, summing split payments', () => {
    const r = verifyProofTransfer(proof(), terms, receipt([transfer(USDC, PAYER, TREASURY, 400_000n), transfer(USDC, PAYER, TREASURY, 250_000n, 1)]));
    expect(r).toEqual({ ok: true, value: { token: 'USDC', tokenAddress: USDC, payer: PAYER, amountRaw: 650_000n, txHash: TX, blockNumber: 100n } });
  });

  it('refuses each cause with its own reason', () => {
    const good = receipt([transfer(USDC, PAYER, TREASURY, 650_000n)]);
    expect(reasonOf(verifyProofTransfer(proof({ chain: 'ethereum' }), terms, good))).toBe('chain_mismatch');
    expect(reasonOf(verifyProofTransfer(proof({ token: 'USDT' }), terms, good))).toBe('token_not_accepted');
    expect(reasonOf(verifyProofTransfer(proof(), terms, undefined))).toBe('tx_not_found');
    expect(reasonOf(verifyProofTransfer(proof(), terms, receipt([], { status: 'reverted' })))).toBe('tx_failed');
    expect(reasonOf(verifyProofTransfer(proof(), terms, receipt([transfer(AUSD, PAYER, TREASURY, 650_000n)])))).toBe('no_token_transfer');
    expect(reasonOf(verifyProofTransfer(proof(), terms, receipt([transfer(USDC, PAYER, OTHER, 650_000n)])))).toBe('wrong_recipient');
    expect(reasonOf(verifyProofTransfer(proof(), terms, receipt([transfer(USDC, OTHER, TREASURY, 650_000n)])))).toBe('wrong_payer');
    expect(reasonOf(verifyProofTransfer(proof(), terms, receipt([transfer(USDC, PAYER, TREASURY, 649_999n)])))).toBe('amount_insufficient');
  });

  it('says how many confirmations are still due, and that it may pass later', () => {
    const r = verifyProofTransfer(proof(), terms, receipt([transfer(USDC, PAYER, TREASURY, 650_000n)], { confirmations: 1n }));
    expect(r).toMatchObject({ ok: false, error: { reason: 'insufficient_confirmations', retryable: true, confirmationsRemaining: 2 } });
    expect(verifyProofTransfer(proof(), terms, undefined)).toMatchObject({ ok: false, error: { retryable: true } });
    expect(verifyProofTransfer(proof({ token: 'USDT' }), terms, undefined)).toMatchObject({ ok: false, error: { retryable: false } });
  });

  it('counts only the payer’s transfers to the treasury, not other legs of the same transaction', () => {
    const mixed = receipt([transfer(USDC, PAYER, TREASURY, 500_000n), transfer(USDC, OTHER, TREASURY, 500_000n, 1), transfer(USDC, PAYER, OTHER, 500_000n, 2)]);
    expect(reasonOf(verifyProofTransfer(proof(), terms, mixed))).toBe('amount_insufficient');
  });
});
