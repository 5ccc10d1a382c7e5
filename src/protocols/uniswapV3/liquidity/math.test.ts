import { describe, expect, it } from 'vitest';
import { amountsForLiquidity, liquidityForAmounts } from './liquidityAmounts.ts';
import { amount0Delta, isqrt, amount1Delta, MAX_SQRT_RATIO, MAX_TICK, MIN_SQRT_RATIO, MIN_TICK, Q96, snapTick, sqrtRatioAtTick, tickAtSqrtRatio } from './tickMath.ts';

/** √(reserve1 / reserve0) × 2^96, rounded down: how Uniswap's own tests write a price. */
const encodePriceSqrt = (reserve1: bigint, reserve0: bigint): bigint => isqrt((reserve1 << 192n) / reserve0);
const E18 = 10n ** 18n;

describe('TickMath (v3-core vectors)', () => {
  it('the bounds and tick 0', () => {
    expect(sqrtRatioAtTick(MIN_TICK)).toBe(MIN_SQRT_RATIO);
    expect(sqrtRatioAtTick(MAX_TICK)).toBe(MAX_SQRT_RATIO);
    expect(sqrtRatioAtTick(0)).toBe(Q96);
    expect(sqrtRatioAtTick(MIN_TICK + 1)).toBe(4_295_343_490n);
    expect(sqrtRatioAtTick(MAX_TICK - 1)).toBe(1_461_373_636_630_004_318_706_518_188_784_493_106_690_254_656_249n);
    expect(() => sqrtRatioAtTick(MAX_TICK + 1)).toThrow(RangeError);
    expect(() => sqrtRatioAtTick(MIN_TICK - 1)).toThrow(RangeError);
  });

  it('agrees with √1.0001^tick to 10 significant digits across the range', () => {
    for (const tick of [-500_000, -200_000, -50_000, -1, 1, 10, 100, 1000, 50_000, 150_000, 250_000]) {
      const exact = Number(sqrtRatioAtTick(tick)) / 2 ** 96;
      expect(Math.abs(exact / 1.0001 ** (tick / 2) - 1)).toBeLessThan(1e-10);
    }
  });

  it('getTickAtSqrtRatio: the greatest tick at or below the price, at the bounds and around every tested tick', () => {
    expect(tickAtSqrtRatio(MIN_SQRT_RATIO)).toBe(MIN_TICK);
    expect(tickAtSqrtRatio(MAX_SQRT_RATIO - 1n)).toBe(MAX_TICK - 1);
    for (const tick of [-887_271, -276_325, -60, -1, 0, 1, 59, 200_311, 887_271]) {
      expect(tickAtSqrtRatio(sqrtRatioAtTick(tick))).toBe(tick);
      expect(tickAtSqrtRatio(sqrtRatioAtTick(tick) - 1n)).toBe(tick - 1);
    }
    expect(() => tickAtSqrtRatio(MIN_SQRT_RATIO - 1n)).toThrow(RangeError);
    expect(() => tickAtSqrtRatio(MAX_SQRT_RATIO)).toThrow(RangeError);
  });

  it('snaps a tick to the spacing, down or up, inside the usable range', () => {
    expect(snapTick(-201_155, 10, 'floor')).toBe(-201_160);
    expect(snapTick(-201_155, 10, 'ceil')).toBe(-201_150);
    expect(snapTick(120, 60, 'floor')).toBe(120);
    expect(snapTick(MIN_TICK, 60, 'floor')).toBe(-887_220);
    expect(snapTick(MAX_TICK, 60, 'ceil')).toBe(887_220);
  });
});

describe('isqrt', () => {
  it('is the floor of the square root, small and 384-bit', () => {
    for (const n of [0n, 1n, 2n, 3n, 4n, 15n, 16n, 17n, (1n << 192n) + 12345n, (1n << 383n) - 1n]) {
      const r = isqrt(n);
      expect(r * r <= n && (r + 1n) * (r + 1n) > n).toBe(true);
    }
  });
});

describe('SqrtPriceMath (v3-core vectors)', () => {
  it('0.1 token1 and ≈0.0909 token0 between prices 1 and 1.21 for 1e18 liquidity, rounded both ways', () => {
    const [p1, p121] = [encodePriceSqrt(1n, 1n), encodePriceSqrt(121n, 100n)];
    expect(amount0Delta(p1, p121, E18, true)).toBe(90_909_090_909_090_910n);
    expect(amount0Delta(p1, p121, E18, false)).toBe(90_909_090_909_090_909n);
    expect(amount1Delta(p1, p121, E18, true)).toBe(100_000_000_000_000_000n);
    expect(amount1Delta(p1, p121, E18, false)).toBe(99_999_999_999_999_999n);
    expect(amount0Delta(p1, p121, 0n, true)).toBe(0n);
  });
});

describe('LiquidityAmounts (v3-periphery vectors)', () => {
  const [a, b] = [encodePriceSqrt(100n, 110n), encodePriceSqrt(110n, 100n)];
  it('liquidity for 100 token0 and 200 token1 at a price inside, below and above the range', () => {
    expect(liquidityForAmounts(encodePriceSqrt(1n, 1n), a, b, 100n, 200n)).toBe(2148n);
    expect(liquidityForAmounts(encodePriceSqrt(99n, 110n), a, b, 100n, 200n)).toBe(1048n);
    expect(liquidityForAmounts(encodePriceSqrt(111n, 100n), a, b, 100n, 200n)).toBe(2097n);
  });

  it('what the pool takes for that liquidity never exceeds the desired amounts; what it pays back never exceeds what it took', () => {
    const tickLower = -600;
    const tickUpper = 1200;
    // At a tick, and between two ticks (the pool's price rarely sits exactly on one).
    for (const [tick, between] of [[-1000, 0n], [-600, 0n], [-1, 10n ** 20n], [0, 0n], [599, 10n ** 24n], [1199, 0n], [1200, 0n], [5000, 10n ** 22n]] as const) {
      const price = { sqrtPriceX96: sqrtRatioAtTick(tick) + between, tick };
      for (const [d0, d1] of [[10n ** 18n, 3_000n * 10n ** 6n], [5n, 10n ** 20n], [10n ** 20n, 7n]] as const) {
        const l = liquidityForAmounts(price.sqrtPriceX96, sqrtRatioAtTick(tickLower), sqrtRatioAtTick(tickUpper), d0, d1);
        const taken = amountsForLiquidity(price, tickLower, tickUpper, l, 'add');
        const back = amountsForLiquidity(price, tickLower, tickUpper, l, 'remove');
        expect(taken.amount0 <= d0 && taken.amount1 <= d1).toBe(true);
        expect(back.amount0 <= taken.amount0 && back.amount1 <= taken.amount1).toBe(true);
        expect(taken.amount0 - back.amount0 <= 1n && taken.amount1 - back.amount1 <= 1n).toBe(true);
      }
    }
  });
});
