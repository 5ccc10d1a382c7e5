import { encodeAbiParameters, keccak256, zeroAddress, type Hex } from 'viem';
import type { UniswapV4PoolKey } from '../../../protocols/uniswapV4/config.ts';
import type { DevnetChain } from '../../manifest.ts';
import { fullRange, fullRangeLiquidity, sqrtPriceX96 } from '../uniswap/math.ts';
import { tokenOf, units, type DevnetToken } from '../uniswap/seeding.ts';

/** Native ETH in a v4 pool: currency 0x0, 18 decimals. */
const ETH = { symbol: 'ETH', address: zeroAddress, decimals: 18 } as const;
type Currency = DevnetToken | typeof ETH;

/**
 * The v4 pools (no hooks), each seeded with one full-range position of about these whole-token amounts, which
 * also set the start price: 3,000 USDC per ETH, 1 USDC per USDT.
 */
export const V4_POOL_SEEDS = [
  { a: 'ETH', b: 'USDC', amountA: 10_000n, amountB: 30_000_000n, fee: 3000, tickSpacing: 60 },
  { a: 'USDC', b: 'USDT', amountA: 10_000_000n, amountB: 10_000_000n, fee: 500, tickSpacing: 10 },
] as const;

export interface V4PoolPlan {
  label: string;
  key: UniswapV4PoolKey;
  id: Hex;
  currency0: Currency;
  currency1: Currency;
  sqrtPriceX96: bigint;
  /** The seed's full-range liquidity, and the most of each currency it takes. */
  liquidity: bigint;
  amount0: bigint;
  amount1: bigint;
  tickLower: number;
  tickUpper: number;
}

/** PoolId = keccak256(abi.encode(PoolKey)). */
export function v4PoolId(key: UniswapV4PoolKey): Hex {
  return keccak256(
    encodeAbiParameters(
      [{ type: 'address' }, { type: 'address' }, { type: 'uint24' }, { type: 'int24' }, { type: 'address' }],
      [key.currency0, key.currency1, key.fee, key.tickSpacing, key.hooks],
    ),
  );
}

export function v4Pools(tokens: DevnetChain['tokens']): V4PoolPlan[] {
  const currency = (symbol: string): Currency => (symbol === 'ETH' ? ETH : tokenOf(tokens, symbol));
  return V4_POOL_SEEDS.map((seed) => {
    const a = currency(seed.a);
    const b = currency(seed.b);
    const amountA = units(a, seed.amountA);
    const amountB = units(b, seed.amountB);
    const aFirst = BigInt(a.address) < BigInt(b.address);
    const [currency0, currency1, amount0, amount1] = aFirst ? [a, b, amountA, amountB] : [b, a, amountB, amountA];
    const key: UniswapV4PoolKey = { currency0: currency0.address, currency1: currency1.address, fee: seed.fee, tickSpacing: seed.tickSpacing, hooks: zeroAddress };
    const sqrtP = sqrtPriceX96(amount0, amount1);
    return {
      label: `${seed.a}/${seed.b} ${seed.fee / 10_000}%`,
      key,
      id: v4PoolId(key),
      currency0,
      currency1,
      sqrtPriceX96: sqrtP,
      liquidity: fullRangeLiquidity(sqrtP, amount0, amount1),
      amount0,
      amount1,
      ...fullRange(seed.tickSpacing),
    };
  });
}
