import type { TokenInfo } from '../../common/amounts.ts';
import { resolveToken } from '../../common/tokens.ts';
import type { Pool } from '../pools.ts';
import { isqrt, MAX_SQRT_RATIO, MIN_SQRT_RATIO, snapTick, sqrtRatioAtTick, tickAtSqrtRatio, usableTickBounds } from './tickMath.ts';

/** A position's range: two ticks on the pool's spacing, lower below upper. */
export interface TickRange {
  tickLower: number;
  tickUpper: number;
}

/** `"2500.5"` as numerator / 10^places. */
const decimal = (text: string): { n: bigint; scale: bigint } => {
  const [whole, frac = ''] = text.split('.');
  return { n: BigInt(whole! + frac), scale: 10n ** BigInt(frac.length) };
};

/**
 * The √price (Q64.96, raw token1 per raw token0) of a price in whole tokens: `quoteToken` per whole other token.
 * Clamped into TickMath's range (a price beyond it is the pool's widest).
 */
function sqrtOfPrice(text: string, pool: Pool, quoteIsToken1: boolean): bigint {
  const { n, scale } = decimal(text);
  const [d0, d1] = [10n ** BigInt(pool.token0.decimals), 10n ** BigInt(pool.token1.decimals)];
  // token1 per token0 in raw units: p·10^d1/10^d0, or, quoted in token0, its inverse.
  const [num, den] = quoteIsToken1 ? [n * d1, scale * d0] : [scale * d1, n * d0];
  const s = isqrt((num << 192n) / den);
  return s < MIN_SQRT_RATIO ? MIN_SQRT_RATIO : s >= MAX_SQRT_RATIO ? MAX_SQRT_RATIO - 1n : s;
}

/** The least tick whose √ratio is at least `s`. */
const tickAtOrAbove = (s: bigint): number => {
  const t = tickAtSqrtRatio(s);
  return sqrtRatioAtTick(t) < s ? t + 1 : t;
};

/**
 * The ticks of a price range, snapped outwards to the pool's tick spacing (the lower price down, the upper up), so
 * the range always covers the prices asked; prices quoted in token0 (per token1) are inverted first, which swaps
 * which of them bounds the lower tick. Without prices: the full range (the widest ticks on the spacing).
 */
export function rangeOf(pool: Pool, prices: { lower: string; upper: string; quoteToken?: string | undefined } | undefined): TickRange & { quoteToken: TokenInfo } {
  const quoteToken = prices?.quoteToken === undefined ? pool.token1 : resolveToken(prices.quoteToken, [pool.token0, pool.token1], 'quote_token', `the pool ${pool.token0.symbol}/${pool.token1.symbol}`);
  const bounds = usableTickBounds(pool.tickSpacing);
  if (!prices) return { tickLower: bounds.min, tickUpper: bounds.max, quoteToken };
  const inToken1 = quoteToken.address === pool.token1.address;
  const sLower = sqrtOfPrice(inToken1 ? prices.lower : prices.upper, pool, inToken1);
  const sUpper = sqrtOfPrice(inToken1 ? prices.upper : prices.lower, pool, inToken1);
  let tickLower = snapTick(tickAtSqrtRatio(sLower), pool.tickSpacing, 'floor');
  let tickUpper = snapTick(tickAtOrAbove(sUpper), pool.tickSpacing, 'ceil');
  // Both prices on one grid point, or both past one end: the narrowest range there.
  if (tickUpper <= tickLower) {
    tickUpper = tickLower + pool.tickSpacing;
    if (tickUpper > bounds.max) [tickLower, tickUpper] = [bounds.max - pool.tickSpacing, bounds.max];
  }
  return { tickLower, tickUpper, quoteToken };
}

/** price_lower < price_upper, compared exactly as decimals. */
export function pricesOrdered(lower: string, upper: string): boolean {
  const a = decimal(lower);
  const b = decimal(upper);
  return a.n * b.scale < b.n * a.scale;
}
