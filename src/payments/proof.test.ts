import { describe, expect, it } from 'vitest';
import { encodeAbiParameters, encodeEventTopics, parseAbi, type Address, type Hex } from 'viem';
import type { PaymentProof, PaymentQuote } from '../api/v1alpha1/index.ts';
import type { TransactionReceiptInfo } from '../chain/types.ts';
import { candidatesOf, matchQuote, verifyProofTransfer, type ProvenTransfer, type ProofTerms } from './proof.ts';

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

describe('a payment proof against the chain', () => {
  it('takes the payer’s transfers of the named token to the treasury, a split payment whole, named by its first log', () => {
    const r = verifyProofTransfer(
      proof(),
      terms,
      receipt([transfer(AUSD, PAYER, TREASURY, 1n), transfer(USDC, PAYER, TREASURY, 400_000n, 5), transfer(USDC, PAYER, TREASURY, 250_000n, 6)]),
    );
    expect(r).toEqual({
      ok: true,
      value: {
        token: 'USDC',
        tokenAddress: USDC,
        payer: PAYER,
        amountRaw: 650_000n,
        logIndex: 1,
        logIndexes: [1, 2],
        parts: [
          { logIndex: 1, amountRaw: 400_000n },
          { logIndex: 2, amountRaw: 250_000n },
        ],
        txHash: TX,
        blockNumber: 100n,
        blockTimestamp: 1_767_225_600n,
      },
    });
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
  });

  it('a name every object has is no token: the lookup is by own keys', () => {
    for (const token of ['constructor', 'toString', 'valueOf', 'hasOwnProperty']) {
      expect(reasonOf(verifyProofTransfer(proof({ token }), terms, receipt([transfer(USDC, PAYER, TREASURY, 650_000n)])))).toBe('token_not_accepted');
    }
  });

  it('says how many confirmations are still due, and that it may pass later', () => {
    const r = verifyProofTransfer(proof(), terms, receipt([transfer(USDC, PAYER, TREASURY, 650_000n)], { confirmations: 1n }));
    expect(r).toMatchObject({ ok: false, error: { reason: 'insufficient_confirmations', retryable: true, confirmationsRemaining: 2 } });
    expect(verifyProofTransfer(proof(), terms, undefined)).toMatchObject({ ok: false, error: { retryable: true } });
    expect(verifyProofTransfer(proof({ token: 'USDT' }), terms, undefined)).toMatchObject({ ok: false, error: { retryable: false } });
  });

  it('counts only the payer’s transfers to the treasury, not other legs of the same transaction', () => {
    const mixed = receipt([transfer(USDC, PAYER, TREASURY, 500_000n), transfer(USDC, OTHER, TREASURY, 500_000n, 1), transfer(USDC, PAYER, OTHER, 500_000n, 2)]);
    const r = verifyProofTransfer(proof(), terms, mixed);
    expect(r.ok && r.value.amountRaw).toBe(500_000n);
  });
});

describe('which quote a transfer pays', () => {
  const NOW = new Date('2026-01-01T00:05:00Z'); // block time of the fixtures: 2026-01-01T00:00:00Z
  const quote = (amountRaw: bigint, over: Partial<PaymentQuote> = {}): PaymentQuote => ({
    amountUsd: 0.65,
    gasCostUsd: 0.64,
    feeUsd: 0.01,
    chainId: 84532,
    recipient: TREASURY,
    tokens: [
      { symbol: 'USDC', address: USDC, decimals: 6, amountRaw: amountRaw.toString() },
      { symbol: 'aUSD', address: AUSD, decimals: 6, amountRaw: amountRaw.toString() },
    ],
    expiresAt: '2026-01-01T00:10:00Z',
    fromBlock: '99',
    reservedUntil: '2026-01-01T00:11:00Z',
    ...over,
  });
  const proven = (amountRaw: bigint, over: Partial<ProvenTransfer> = {}): ProvenTransfer => ({
    token: 'USDC',
    tokenAddress: USDC,
    payer: PAYER,
    amountRaw,
    logIndex: 0,
    logIndexes: [0],
    parts: [{ logIndex: 0, amountRaw }],
    txHash: TX,
    blockNumber: 100n,
    blockTimestamp: 1_767_225_600n,
    ...over,
  });
  const reason = (m: ReturnType<typeof matchQuote>) => (m.kind === 'refused' ? m.rejection.reason : m.kind);

  it('unsigned: exactly the quote’s amount, mined after the quote was made and before its hold ends', () => {
    const q = quote(650_123n);
    expect(matchQuote(proven(650_123n), [q], { signed: false, now: NOW })).toEqual({ kind: 'paid', quote: q });
    expect(reason(matchQuote(proven(650_122n), [q], { signed: false, now: NOW }))).toBe('amount_insufficient');
    expect(reason(matchQuote(proven(650_124n), [q], { signed: false, now: NOW }))).toBe('amount_mismatch');
    expect(reason(matchQuote(proven(650_123n, { blockNumber: 99n }), [q], { signed: false, now: NOW }))).toBe('paid_before_quote');
    const late = proven(650_123n, { blockTimestamp: BigInt(Date.parse('2026-01-01T00:11:01Z') / 1000) });
    expect(reason(matchQuote(late, [q], { signed: false, now: NOW }))).toBe('paid_after_quote');
  });

  it('unsigned: a transfer made for an earlier quote of the request, in that quote’s window, pays it even once it expired', () => {
    const earlier = quote(650_123n, { expiresAt: '2026-01-01T00:01:00Z', reservedUntil: '2026-01-01T00:02:00Z' });
    const current = quote(700_456n, { fromBlock: '120' });
    expect(matchQuote(proven(650_123n), [current, earlier], { signed: false, now: NOW })).toEqual({ kind: 'paid', quote: earlier });
    // The same amount mined after the earlier quote's hold: someone else's quote may hold it by then.
    const after = proven(650_123n, { blockNumber: 130n, blockTimestamp: BigInt(Date.parse('2026-01-01T00:03:00Z') / 1000) });
    expect(reason(matchQuote(after, [current, earlier], { signed: false, now: NOW }))).toBe('amount_insufficient');
  });

  it('unsigned, with the current quote expired and no quote paid: quote again', () => {
    const expired = quote(650_123n, { expiresAt: '2026-01-01T00:04:00Z' });
    expect(matchQuote(proven(999n), [expired], { signed: false, now: NOW })).toEqual({ kind: 'expired' });
  });

  it('signed: any amount that covers the current, valid quote, whenever it was mined', () => {
    const q = quote(650_123n);
    expect(matchQuote(proven(900_000n, { blockNumber: 1n }), [q], { signed: true, now: NOW })).toEqual({ kind: 'paid', quote: q });
    expect(reason(matchQuote(proven(650_122n), [q], { signed: true, now: NOW }))).toBe('amount_insufficient');
    expect(matchQuote(proven(900_000n), [quote(650_123n, { expiresAt: '2026-01-01T00:04:00Z' })], { signed: true, now: NOW })).toEqual({ kind: 'expired' });
  });

  it('one transaction paying two quotes: each of its logs pays its own quote; together they pay a split payment', () => {
    const two = { ...proven(1_300_246n), logIndexes: [0, 3], parts: [{ logIndex: 0, amountRaw: 650_123n }, { logIndex: 3, amountRaw: 650_123n }] };
    const candidates = candidatesOf(two);
    expect(candidates.map((c) => [c.logIndexes, c.amountRaw])).toEqual([
      [[0], 650_123n],
      [[3], 650_123n],
      [[0, 3], 1_300_246n],
    ]);
    const q = quote(650_123n);
    expect(matchQuote(candidates[1]!, [q], { signed: false, now: NOW })).toEqual({ kind: 'paid', quote: q });
    expect(matchQuote(candidates[2]!, [quote(1_300_246n)], { signed: false, now: NOW }).kind).toBe('paid');
  });

  it('a quote made before amounts were unique (no fromBlock) takes any covering amount while valid, as it did', () => {
    const legacy = quote(650_000n, { fromBlock: undefined, reservedUntil: undefined });
    expect(matchQuote(proven(700_000n, { blockNumber: 1n }), [legacy], { signed: false, now: NOW })).toEqual({ kind: 'paid', quote: legacy });
    expect(reason(matchQuote(proven(1n), [legacy], { signed: false, now: NOW }))).toBe('amount_insufficient');
  });
});
