/**
 * Uniswap v3's tick ↔ √price arithmetic (v3-core TickMath, SqrtPriceMath, FullMath), in bigint with the same
 * integer steps and roundings as the contracts, so a quote equals what the pool computes to the last unit.
 * √prices are Q64.96 fixed point: √(token1 per token0, raw units) × 2^96.
 */
export const MIN_TICK = -887_272;
export const MAX_TICK = 887_272;
export const MIN_SQRT_RATIO = 4_295_128_739n;
export const MAX_SQRT_RATIO = 1_461_446_703_485_210_103_287_273_052_203_988_822_378_723_970_342n;
export const Q96 = 1n << 96n;
export const Q128 = 1n << 128n;
const MAX_UINT256 = (1n << 256n) - 1n;

/**
 * 2^128 / √1.0001^(2^i), for i = 0…19, each rounded as TickMath.sol has it: the √ratio of a tick is the product
 * of those its bits select (each product truncated to 128 fractional bits, as the contract does).
 */
const BIT_FACTORS: readonly bigint[] = [
  0xfffcb933bd6fad37aa2d162d1a594001n,
  0xfff97272373d413259a46990580e213an,
  0xfff2e50f5f656932ef12357cf3c7fdccn,
  0xffe5caca7e10e4e61c3624eaa0941cd0n,
  0xffcb9843d60f6159c9db58835c926644n,
  0xff973b41fa98c081472e6896dfb254c0n,
  0xff2ea16466c96a3843ec78b326b52861n,
  0xfe5dee046a99a2a811c461f1969c3053n,
  0xfcbe86c7900a88aedcffc83b479aa3a4n,
  0xf987a7253ac413176f2b074cf7815e54n,
  0xf3392b0822b70005940c7a398e4b70f3n,
  0xe7159475a2c29b7443b29c7fa6e889d9n,
  0xd097f3bdfd2022b8845ad8f792aa5825n,
  0xa9f746462d870fdf8a65dc1f90e061e5n,
  0x70d869a156d2a1b890bb3df62baf32f7n,
  0x31be135f97d08fd981231505542fcfa6n,
  0x9aa508b5b7a84e1c677de54f3e99bc9n,
  0x5d6af8dedb81196699c329225ee604n,
  0x2216e584f5fa1ea926041bedfe98n,
  0x48a170391f7dc42444e8fa2n,
];

/** √(1.0001^tick) × 2^96, as TickMath.getSqrtRatioAtTick (rounded up from Q128.128 to Q64.96). */
export function sqrtRatioAtTick(tick: number): bigint {
  if (!Number.isInteger(tick) || tick < MIN_TICK || tick > MAX_TICK) throw new RangeError(`tick ${tick} is outside [${MIN_TICK}, ${MAX_TICK}]`);
  const abs = Math.abs(tick);
  let ratio = abs & 1 ? BIT_FACTORS[0]! : Q128;
  for (let i = 1; i < BIT_FACTORS.length; i++) if (abs & (1 << i)) ratio = (ratio * BIT_FACTORS[i]!) >> 128n;
  if (tick > 0) ratio = MAX_UINT256 / ratio;
  return (ratio >> 32n) + (ratio % (1n << 32n) === 0n ? 0n : 1n);
}

/**
 * The greatest tick whose √ratio is at most `sqrtPriceX96` (TickMath.getTickAtSqrtRatio's definition), by binary
 * search over sqrtRatioAtTick: the same answer as the contract's log₂ approximation, which is exact by construction.
 */
export function tickAtSqrtRatio(sqrtPriceX96: bigint): number {
  if (sqrtPriceX96 < MIN_SQRT_RATIO || sqrtPriceX96 >= MAX_SQRT_RATIO) throw new RangeError(`√price ${sqrtPriceX96} is outside [MIN_SQRT_RATIO, MAX_SQRT_RATIO)`);
  let lo = MIN_TICK;
  let hi = MAX_TICK - 1; // sqrtRatioAtTick(lo) <= √P < sqrtRatioAtTick(hi + 1)
  while (lo < hi) {
    const mid = Math.floor((lo + hi + 1) / 2);
    if (sqrtRatioAtTick(mid) <= sqrtPriceX96) lo = mid;
    else hi = mid - 1;
  }
  return lo;
}

/** The widest ticks a pool of this spacing accepts (TickMath's bounds rounded inwards to multiples of it). */
export const usableTickBounds = (tickSpacing: number): { min: number; max: number } => ({
  min: Math.ceil(MIN_TICK / tickSpacing) * tickSpacing,
  max: Math.floor(MAX_TICK / tickSpacing) * tickSpacing,
});

/** `tick` on the spacing's grid: rounded down (`floor`) or up (`ceil`), and kept within the usable bounds. */
export function snapTick(tick: number, tickSpacing: number, direction: 'floor' | 'ceil'): number {
  const snapped = (direction === 'floor' ? Math.floor(tick / tickSpacing) : Math.ceil(tick / tickSpacing)) * tickSpacing;
  const { min, max } = usableTickBounds(tickSpacing);
  return Math.min(max, Math.max(min, snapped));
}

/** FullMath.mulDiv: ⌊a·b / d⌋ (bigint never overflows; the contract's 512-bit product gives the same). */
export const mulDiv = (a: bigint, b: bigint, d: bigint): bigint => (a * b) / d;
/** FullMath.mulDivRoundingUp: ⌈a·b / d⌉. */
export const mulDivRoundingUp = (a: bigint, b: bigint, d: bigint): bigint => (a * b + d - 1n) / d;
const divRoundingUp = (a: bigint, d: bigint): bigint => (a + d - 1n) / d;
const ordered = (a: bigint, b: bigint): [bigint, bigint] => (a > b ? [b, a] : [a, b]);

/** SqrtPriceMath.getAmount0Delta: token0 between two √prices for liquidity L, rounded up (paid in) or down (paid out). */
export function amount0Delta(sqrtA: bigint, sqrtB: bigint, liquidity: bigint, roundUp: boolean): bigint {
  const [a, b] = ordered(sqrtA, sqrtB);
  const numerator1 = liquidity << 96n;
  const numerator2 = b - a;
  return roundUp ? divRoundingUp(mulDivRoundingUp(numerator1, numerator2, b), a) : mulDiv(numerator1, numerator2, b) / a;
}

/** SqrtPriceMath.getAmount1Delta: token1 between two √prices for liquidity L. */
export function amount1Delta(sqrtA: bigint, sqrtB: bigint, liquidity: bigint, roundUp: boolean): bigint {
  const [a, b] = ordered(sqrtA, sqrtB);
  return roundUp ? mulDivRoundingUp(liquidity, b - a, Q96) : mulDiv(liquidity, b - a, Q96);
}

/** ⌊√n⌋ for a non-negative bigint: Newton's method from a power of two above the root (it then only falls). */
export function isqrt(n: bigint): bigint {
  if (n < 0n) throw new RangeError('square root of a negative number');
  if (n < 2n) return n;
  let x = 1n << BigInt(Math.ceil(n.toString(2).length / 2));
  for (;;) {
    const y = (x + n / x) >> 1n;
    if (y >= x) return x;
    x = y;
  }
}
