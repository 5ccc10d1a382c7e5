import { describe, expect, it } from 'vitest';
import type { Pool } from '../pools.ts';
import { feesOwed, type NftPosition, type RangeState } from '../positions.ts';
import { pricesOrdered, rangeOf } from './range.ts';
import { sqrtRatioAtTick } from './tickMath.ts';

const USDC = { symbol: 'USDC', address: '0x403dA53D6198B01028da0C450477cbCf2A787504' as const, decimals: 6 };
const WETH = { symbol: 'WETH', address: '0x421b34717483B8C473E6E63CA92E969948Bf39eE' as const, decimals: 18 };
const pool = (tickSpacing: number): Pool => ({ address: '0x0000000000000000000000000000000000000001', token0: USDC, token1: WETH, fee: 3000, tickSpacing, sqrtPriceX96: 0n, tick: 0, liquidity: 0n });
/** token0 (USDC) per whole token1 (WETH) at a tick: 10^12 / 1.0001^tick. */
const usdcPerWeth = (tick: number) => 1e12 / 1.0001 ** tick;

describe('rangeOf: prices to ticks', () => {
  it('prices in token0 (USDC per WETH) are inverted, snapped outwards, and cover what was asked', () => {
    const r = rangeOf(pool(60), { lower: '2500', upper: '3500', quoteToken: 'usdc' });
    expect(r).toMatchObject({ tickLower: 194_700, tickUpper: 198_120, quoteToken: USDC });
    expect(usdcPerWeth(r.tickLower)).toBeGreaterThanOrEqual(3500);
    expect(usdcPerWeth(r.tickUpper)).toBeLessThanOrEqual(2500);
    expect(usdcPerWeth(r.tickLower - 60)).toBeGreaterThan(usdcPerWeth(r.tickLower)); // one spacing further would be wider: the snap is the tightest cover
    expect(usdcPerWeth(r.tickLower + 60)).toBeLessThan(3500);
  });

  it('prices in token1 (the default) map straight: the same range asked as WETH per USDC gives the same ticks', () => {
    const r = rangeOf(pool(60), { lower: String(1 / 3500).slice(0, 14), upper: String(1 / 2500), quoteToken: undefined });
    expect(r.quoteToken).toEqual(WETH);
    expect([r.tickLower, r.tickUpper]).toEqual([194_700, 198_120]);
  });

  it('no prices: the full range on the spacing; prices beyond the pool’s: its widest ticks; one grid point: one spacing', () => {
    expect(rangeOf(pool(10), undefined)).toMatchObject({ tickLower: -887_270, tickUpper: 887_270 });
    // 1e-36 USDC per WETH is 1e48 raw WETH per raw USDC, ≈1e59 is ≈1e-47: both past what TickMath spans (2^±128).
    expect(rangeOf(pool(60), { lower: '0.000000000000000000000000000000000001', upper: '9'.repeat(59), quoteToken: 'USDC' })).toMatchObject({ tickLower: -887_220, tickUpper: 887_220 });
    const one = rangeOf({ ...pool(60), token0: { ...USDC, decimals: 18 } }, { lower: '1', upper: '1.000001', quoteToken: 'WETH' });
    expect(one).toMatchObject({ tickLower: 0, tickUpper: 60 });
  });

  it('a quote token that is not the pool’s is refused on quote_token', () => {
    expect(() => rangeOf(pool(60), { lower: '1', upper: '2', quoteToken: 'USDT' })).toThrow(expect.objectContaining({ code: 'unknown_token', field: 'quote_token' }));
  });

  it('orders decimal prices exactly', () => {
    expect(pricesOrdered('2500', '2500.0000001')).toBe(true);
    expect(pricesOrdered('2500.10', '2500.1')).toBe(false);
    expect(pricesOrdered('3500', '2500')).toBe(false);
  });
});

describe('feesOwed: tokensOwed plus fee growth inside since the last update, wrapping as uint256', () => {
  const Q128 = 1n << 128n;
  const nft = (over: Partial<NftPosition>): NftPosition => ({
    tokenId: 1n, token0: USDC.address, token1: WETH.address, fee: 3000, tickLower: -60, tickUpper: 60, liquidity: 10n ** 18n,
    feeGrowthInside0LastX128: 0n, feeGrowthInside1LastX128: 0n, tokensOwed0: 0n, tokensOwed1: 0n, ...over,
  });
  const state = (over: Partial<RangeState>): RangeState => ({ sqrtPriceX96: sqrtRatioAtTick(0), tick: 0, feeGrowthGlobal0X128: 0n, feeGrowthGlobal1X128: 0n, lower: [0n, 0n], upper: [0n, 0n], ...over });

  it('in range: the global growth less what lies outside both ticks, times L', () => {
    const s = state({ feeGrowthGlobal0X128: 5n * Q128, feeGrowthGlobal1X128: 3n * Q128, lower: [Q128, 0n], upper: [Q128, Q128] });
    // inside0 = 5 − 1 − 1 = 3, inside1 = 3 − 0 − 1 = 2 (per unit of L, Q128): L × that.
    expect(feesOwed(nft({ tokensOwed0: 7n }), s)).toEqual({ fees0: 3n * 10n ** 18n + 7n, fees1: 2n * 10n ** 18n });
  });

  it('below the range: everything earned lies between the ticks’ outside values', () => {
    const s = state({ tick: -100, feeGrowthGlobal0X128: 10n * Q128, lower: [4n * Q128, 0n], upper: [Q128, 0n] });
    // below the lower tick: below = global − outside(lower) = 6, above = outside(upper) = 1: inside = 10 − 6 − 1 = 3.
    expect(feesOwed(nft({}), s).fees0).toBe(3n * 10n ** 18n);
  });

  it('wraps: a growth that overflowed uint256 since the last update still counts what was earned', () => {
    const max = (1n << 256n) - 1n;
    const s = state({ feeGrowthGlobal0X128: Q128 - 1n });
    // Last seen at 2^256 − 1 − Q128, now Q128 − 1: the growth wrapped, and 2·Q128 per unit was earned since.
    expect(feesOwed(nft({ feeGrowthInside0LastX128: max - Q128 }), s).fees0).toBe(2n * 10n ** 18n);
  });
});
