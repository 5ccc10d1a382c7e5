import type { Address } from 'viem';
import { describe, expect, it } from 'vitest';
import type { ExecutionRequest, PaymentQuote } from '../api/v1alpha1/index.ts';
import { executionRequest } from '../gateway/testing/harness.ts';
import { createHeldAmounts, withUniqueAmounts } from './uniqueAmounts.ts';

const USDC: Address = '0x1111111111111111111111111111111111111111';
const AUSD: Address = '0x3333333333333333333333333333333333333333';
const NOW = new Date('2026-01-01T00:00:00Z');

const quote = (amountRaw: string, reservedUntil?: string): PaymentQuote => ({
  amountUsd: 1,
  gasCostUsd: 0.99,
  feeUsd: 0.01,
  chainId: 84532,
  recipient: '0x7777777777777777777777777777777777777777',
  tokens: [
    { symbol: 'USDC', address: USDC, decimals: 6, amountRaw },
    { symbol: 'aUSD', address: AUSD, decimals: 6, amountRaw },
  ],
  expiresAt: '2026-01-01T00:10:00Z',
  ...(reservedUntil !== undefined && { fromBlock: '10', reservedUntil }),
});
const requestWith = (name: string, q: PaymentQuote, earlier: PaymentQuote[] = []): ExecutionRequest => ({
  ...executionRequest(name, 'client-a'),
  status: { phase: 'PaymentRequired', payment: { quote: q, ...(earlier.length > 0 && { earlierQuotes: earlier }) } },
});

describe('quote-unique amounts', () => {
  it('raises each amount by at most 0.001 token to one no open quote holds', () => {
    const taken = new Set([1_000_001n, 1_000_002n]);
    let i = 0;
    const lowestFirst = () => i++ / 1000; // offsets 1, 2, 3, …: the first two are taken
    const q = withUniqueAmounts(quote('1000000'), () => taken, lowestFirst)!;
    expect(q.tokens[0]!.amountRaw).toBe('1000003');
    for (const t of q.tokens) {
      const amount = BigInt(t.amountRaw);
      expect(amount).toBeGreaterThan(1_000_000n);
      expect(amount).toBeLessThanOrEqual(1_001_000n);
    }
  });

  it('never gives a held amount, however crowded: the range widens to 0.01 token, then it says none is free', () => {
    const crowded = new Set(Array.from({ length: 1000 }, (_, i) => 1_000_001n + BigInt(i))); // every 0.001-token offset
    const q = withUniqueAmounts(quote('1000000'), () => crowded)!;
    const amount = BigInt(q.tokens[0]!.amountRaw);
    expect(crowded.has(amount)).toBe(false);
    expect(amount).toBeLessThanOrEqual(1_010_000n);
    const full = { has: () => true } as unknown as ReadonlySet<bigint>;
    expect(withUniqueAmounts(quote('1000000'), () => full)).toBeUndefined();
  });

  it('holds the amounts of every quote still held (current and earlier), per token, and of quotes made here not yet cached', () => {
    const cached = [
      requestWith('a', quote('500', '2026-01-01T00:11:00Z'), [quote('400', '2026-01-01T00:01:00Z'), quote('300', '2025-12-31T23:59:00Z')]),
      requestWith('b', quote('200')), // made before amounts were unique: holds nothing
    ];
    const held = createHeldAmounts(() => cached);
    held.hold('base', quote('600', '2026-01-01T00:11:00Z'));
    expect([...held.held('base', USDC, NOW)].sort()).toEqual([400n, 500n, 600n]);
    expect([...held.held('base', AUSD, NOW)].sort()).toEqual([400n, 500n, 600n]);
    // A block at the edge of a hold may carry a timestamp on either side of it: the amounts stay held a margin longer.
    expect([...held.held('base', USDC, new Date('2026-01-01T00:11:20Z'))].sort()).toEqual([500n, 600n]);
    // Then they free their amounts, the in-process ones included.
    expect([...held.held('base', USDC, new Date('2026-01-01T00:12:00Z'))]).toEqual([]);
  });
});
