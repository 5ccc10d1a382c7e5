import { describe, expect, it } from 'vitest';
import { configuredPrice, microUsdOf, priceOfRound, type Priced } from './price.ts';

const now = new Date('2026-11-26T12:00:00Z');
const nowS = BigInt(now.getTime() / 1000);

describe('a feed round as a price', () => {
  it('a fresh positive answer is a price, at the feed’s decimals', () => {
    const p = priceOfRound({ answer: 3000_00000000n, updatedAt: nowS - 10n, decimals: 8 }, 18, now, 3600);
    expect(p).toEqual({ kind: 'priced', answer: 3000_00000000n, decimals: 8, assetDecimals: 18, source: 'feed', updatedAt: Number(nowS - 10n) });
    // 0.5 ETH at 3000 USD: 1500 USD; the same price at 18 decimals values the same.
    expect(microUsdOf(5n * 10n ** 17n, p as Priced)).toBe(1_500_000_000n);
    const p18 = priceOfRound({ answer: 3000n * 10n ** 18n, updatedAt: nowS, decimals: 18 }, 18, now, 3600) as Priced;
    expect(microUsdOf(5n * 10n ** 17n, p18)).toBe(1_500_000_000n);
  });

  it('an answer older than maxAgeSeconds is unpriced; one exactly at the bound is not', () => {
    expect(priceOfRound({ answer: 1n, updatedAt: nowS - 3601n, decimals: 8 }, 6, now, 3600)).toMatchObject({ kind: 'unpriced', reason: expect.stringContaining('3601 s old') });
    expect(priceOfRound({ answer: 1n, updatedAt: nowS - 3600n, decimals: 8 }, 6, now, 3600).kind).toBe('priced');
  });

  it('a zero or negative answer, or one dated well in the future, is unpriced', () => {
    expect(priceOfRound({ answer: 0n, updatedAt: nowS, decimals: 8 }, 6, now, 3600)).toMatchObject({ kind: 'unpriced', reason: expect.stringContaining('answers 0') });
    expect(priceOfRound({ answer: -5n, updatedAt: nowS, decimals: 8 }, 6, now, 3600)).toMatchObject({ kind: 'unpriced', reason: expect.stringContaining('answers -5') });
    expect(priceOfRound({ answer: 1n, updatedAt: nowS + 3600n, decimals: 8 }, 6, now, 3600)).toMatchObject({ kind: 'unpriced', reason: expect.stringContaining('future') });
  });
});

describe('a configured price', () => {
  it('a decimal figure, exactly', () => {
    const p = configuredPrice('3000.25', 18) as Priced;
    expect(p).toMatchObject({ kind: 'priced', answer: 300025n, decimals: 2, source: 'configured' });
    expect(microUsdOf(10n ** 18n, p)).toBe(3_000_250_000n);
    expect(configuredPrice('0', 6).kind).toBe('unpriced');
  });

  it('values round up to the micro-dollar, never down', () => {
    const usdc = configuredPrice('1', 6) as Priced;
    expect(microUsdOf(1n, usdc)).toBe(1n);
    const weth = configuredPrice('3000', 18) as Priced;
    expect(microUsdOf(1n, weth)).toBe(1n); // 3e-15 USD: one micro-dollar
    expect(microUsdOf(0n, weth)).toBe(0n);
  });
});
