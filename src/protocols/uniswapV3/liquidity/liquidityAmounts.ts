import { amount0Delta, amount1Delta, mulDiv, Q96, sqrtRatioAtTick } from './tickMath.ts';

/**
 * A position's liquidity and token amounts, as the position manager (v3-periphery LiquidityAmounts) and the pool
 * (UniswapV3Pool._modifyPosition) compute them: the manager turns the desired amounts into liquidity (rounded
 * down), the pool turns liquidity into what it takes (rounded up) or pays back (rounded down).
 */
const MAX_UINT128 = (1n << 128n) - 1n;

const toUint128 = (x: bigint): bigint => {
  if (x > MAX_UINT128) throw new RangeError('liquidity overflows uint128');
  return x;
};

/** LiquidityAmounts.getLiquidityForAmount0: the liquidity `amount0` of token0 buys between √a and √b. */
export function liquidityForAmount0(sqrtA: bigint, sqrtB: bigint, amount0: bigint): bigint {
  const [a, b] = sqrtA > sqrtB ? [sqrtB, sqrtA] : [sqrtA, sqrtB];
  return toUint128(mulDiv(amount0, mulDiv(a, b, Q96), b - a));
}

/** LiquidityAmounts.getLiquidityForAmount1. */
export function liquidityForAmount1(sqrtA: bigint, sqrtB: bigint, amount1: bigint): bigint {
  const [a, b] = sqrtA > sqrtB ? [sqrtB, sqrtA] : [sqrtA, sqrtB];
  return toUint128(mulDiv(amount1, Q96, b - a));
}

/**
 * LiquidityAmounts.getLiquidityForAmounts: the most liquidity the desired amounts pay for at √P in [√a, √b]
 * (what NonfungiblePositionManager.mint / increaseLiquidity adds).
 */
export function liquidityForAmounts(sqrtP: bigint, sqrtA: bigint, sqrtB: bigint, amount0: bigint, amount1: bigint): bigint {
  const [a, b] = sqrtA > sqrtB ? [sqrtB, sqrtA] : [sqrtA, sqrtB];
  if (sqrtP <= a) return liquidityForAmount0(a, b, amount0);
  if (sqrtP < b) {
    const l0 = liquidityForAmount0(sqrtP, b, amount0);
    const l1 = liquidityForAmount1(a, sqrtP, amount1);
    return l0 < l1 ? l0 : l1;
  }
  return liquidityForAmount1(a, b, amount1);
}

/** Where the pool's price is, for the pool's own arithmetic: its √P and its tick (the pool compares ticks). */
export interface PoolPrice {
  sqrtPriceX96: bigint;
  tick: number;
}

/**
 * The tokens the pool moves for `liquidity` in [tickLower, tickUpper) at `price`: taken (`add`, rounded up, as
 * mint does) or paid back (`remove`, rounded down, as burn does). What a position holds now is its `remove` amounts.
 */
export function amountsForLiquidity(price: PoolPrice, tickLower: number, tickUpper: number, liquidity: bigint, side: 'add' | 'remove'): { amount0: bigint; amount1: bigint } {
  const up = side === 'add';
  const a = sqrtRatioAtTick(tickLower);
  const b = sqrtRatioAtTick(tickUpper);
  if (price.tick < tickLower) return { amount0: amount0Delta(a, b, liquidity, up), amount1: 0n };
  if (price.tick < tickUpper) return { amount0: amount0Delta(price.sqrtPriceX96, b, liquidity, up), amount1: amount1Delta(a, price.sqrtPriceX96, liquidity, up) };
  return { amount0: 0n, amount1: amount1Delta(a, b, liquidity, up) };
}
