/**
 * Pool math the devnet's seeding needs (Uniswap's Q64.96 fixed point): the start price and the liquidity of a
 * full-range position. Prices are ratios of raw token units (token1 per token0), as the pools keep them.
 */
export const Q96 = 2n ** 96n;
/** TickMath.MAX_TICK: a full-range position spans the widest multiple of the tick spacing inside ±887272. */
export const MAX_TICK = 887_272;

export function isqrt(n: bigint): bigint {
  if (n < 0n) throw new Error('square root of a negative number');
  if (n < 2n) return n;
  let x = BigInt(Math.floor(Math.sqrt(Number(n))));
  // Newton's steps from the float estimate, then settle on the floor.
  for (;;) {
    const y = (x + n / x) >> 1n;
    if (y >= x && y - x <= 1n) break;
    x = y;
  }
  while (x * x > n) x--;
  while ((x + 1n) * (x + 1n) <= n) x++;
  return x;
}

/** sqrt(amount1 / amount0) in Q64.96: the price at which `amount0` of token0 is worth `amount1` of token1. */
export function sqrtPriceX96(amount0: bigint, amount1: bigint): bigint {
  return isqrt((amount1 << 192n) / amount0);
}

/** The full range at a tick spacing: [-(887272 rounded down to it), +(that)]. */
export function fullRange(tickSpacing: number): { tickLower: number; tickUpper: number } {
  const edge = Math.floor(MAX_TICK / tickSpacing) * tickSpacing;
  return { tickLower: -edge, tickUpper: edge };
}

/**
 * A full-range position's liquidity that needs at most `amount0` and `amount1` at `sqrtP`: a full range holds
 * L·Q96/√P of token0 and L·√P/Q96 of token1 less the (negligible) part beyond its edge ticks, so these bound it
 * from above; a tenth of a percent off covers the pool's rounding up.
 */
export function fullRangeLiquidity(sqrtP: bigint, amount0: bigint, amount1: bigint): bigint {
  const by0 = (amount0 * sqrtP) / Q96;
  const by1 = (amount1 * Q96) / sqrtP;
  const l = by0 < by1 ? by0 : by1;
  return (l * 999n) / 1000n;
}
