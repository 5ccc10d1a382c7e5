import { describe, expect, it } from 'vitest';
import { boundsRecord, midPriceIn, midPriceOut, priceImpactBps, priceOf, swapBounds, swapInput } from './swap.ts';

// √P for 3000 USDC (6 decimals, token1) per WETH (18 decimals, token0): P = 3000e6 / 1e18 in raw units.
const SQRT_3000 = 4339505179874779475002393n; // floor(sqrt(3000e6 / 1e18) * 2^96)
const usdc = { symbol: 'USDC', address: '0x0000000000000000000000000000000000000001' as const, decimals: 6 };
const weth = { symbol: 'WETH', address: '0x0000000000000000000000000000000000000002' as const, decimals: 18 };

describe('swap bounds and price impact', () => {
  it('prices 1 WETH at the mid price after the fee, both ways', () => {
    const hop = { sqrtPriceX96: SQRT_3000, zeroForOne: true, fee: 3000 };
    const out = midPriceOut(10n ** 18n, [hop]);
    expect(Number(out) / 1e6).toBeCloseTo(3000 * 0.997, 2);
    const back = midPriceIn(out, [hop]);
    expect(Number(back) / 1e18).toBeCloseTo(1, 6);
    // Back again within the one raw USDC the first leg rounded away (1e18 / 3000e6 wei of WETH).
    expect(10n ** 18n - back).toBeLessThan(10n ** 18n / 3_000_000_000n + 1n);
    expect(Number(priceOf(10n ** 18n, weth, out, usdc))).toBeCloseTo(2991, 3);
  });

  it('measures price impact against the mid price and never answers a negative one', () => {
    const hops = [{ sqrtPriceX96: SQRT_3000, zeroForOne: true, fee: 500 }];
    const ideal = midPriceOut(10n ** 18n, hops);
    expect(priceImpactBps('exact_in', 10n ** 18n, ideal, hops)).toBe(0);
    // 1% worse, rounded up to the next basis point (the floor of ideal × 0.99 is a little worse than 1%).
    expect(priceImpactBps('exact_in', 10n ** 18n, ideal - ideal / 100n, hops)).toBe(100);
    expect(priceImpactBps('exact_in', 10n ** 18n, ideal - ideal / 100n - 1n, hops)).toBe(101);
    expect(priceImpactBps('exact_in', 10n ** 18n, ideal + 5n, hops)).toBe(0);
    // Exact output: 1 WETH bought with USDC (token1 → token0) for 2% more than the mid price costs.
    const buy = [{ ...hops[0]!, zeroForOne: false }];
    const cost = midPriceIn(10n ** 18n, buy);
    expect(Number(cost) / 1e6).toBeCloseTo(3000 / 0.9995, 2);
    expect(priceImpactBps('exact_out', 10n ** 18n, (cost * 102n) / 100n, buy)).toBe(197);
  });

  it('makes relative bounds absolute once: slippage from the quote, the deadline from the chain; given ones stay', () => {
    const exactIn = { token_in: 'WETH', token_out: 'USDC', amount_in: '1' };
    expect(boundsRecord(exactIn, swapBounds(exactIn, 3_000_000_000n, 1_000n))).toEqual({ amount_out_minimum: '2985000000', deadline: 1600 });
    const exactOut = { token_in: 'USDC', token_out: 'WETH', amount_out: '1', slippage_bps: 100, deadline: 5_000 };
    expect(boundsRecord(exactOut, swapBounds(exactOut, 3_000_000_001n, 1_000n))).toEqual({ amount_in_maximum: '3030000002', deadline: 5000 });
    // A re-plan gets the stored bounds and a new quote: it moves nothing.
    const stored = { ...exactIn, amount_out_minimum: '2985000000', deadline: 1600 };
    expect(boundsRecord(stored, swapBounds(stored, 2_000_000_000n, 1_500n))).toEqual({ amount_out_minimum: '2985000000', deadline: 1600 });
  });

  it('takes exactly one amount, and refuses a slippage past the bound', () => {
    const body = swapInput('ethereum', {});
    const ok = { agent_id: 'a', token_in: 'WETH', token_out: 'USDC' };
    expect(body.safeParse({ ...ok, amount_in: '1' }).success).toBe(true);
    expect(body.safeParse({ ...ok, amount_out: '1', amount_in_maximum: '5' }).success).toBe(true);
    expect(body.safeParse({ ...ok, amount_in: '1', amount_out: '1' }).success).toBe(false);
    expect(body.safeParse({ ...ok, amount_in: '1', amount_in_maximum: '5' }).success).toBe(false);
    expect(body.safeParse({ ...ok, amount_in: '1', slippage_bps: 501 }).success).toBe(false);
    expect(body.safeParse(ok).success).toBe(false);
  });
});
