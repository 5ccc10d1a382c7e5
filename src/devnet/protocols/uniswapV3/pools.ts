import type { Address } from 'viem';
import type { DevnetChain } from '../../manifest.ts';
import { fullRange, sqrtPriceX96 } from '../uniswap/math.ts';
import { tokenOf, units, type DevnetToken } from '../uniswap/seeding.ts';
import { v3PoolAddress } from './contracts.ts';

/** The fee tiers the devnet's pools use, with the factory's tick spacing for each. */
export const V3_TICK_SPACING: Readonly<Record<number, number>> = { 500: 10, 3000: 60, 10000: 200 };

/**
 * The v3 pools, each at two fee tiers, seeded with one full-range position of these whole-token amounts, which
 * also set the start price: 3,000 USDC per WETH, 1 USDC per USDT. A 3,000 USDC swap moves either price ≈ 0.02 %.
 */
export const V3_POOL_SEEDS = [
  { a: 'USDC', b: 'WETH', amountA: 30_000_000n, amountB: 10_000n, fees: [500, 3000] },
  { a: 'USDC', b: 'USDT', amountA: 10_000_000n, amountB: 10_000_000n, fees: [500, 3000] },
] as const;

export interface V3PoolPlan {
  label: string;
  /** As configured: the seed's order (USDC first). */
  tokenA: DevnetToken;
  tokenB: DevnetToken;
  token0: DevnetToken;
  token1: DevnetToken;
  fee: number;
  address: Address;
  sqrtPriceX96: bigint;
  /** The seed, raw units of token0 and token1. */
  amount0: bigint;
  amount1: bigint;
  tickLower: number;
  tickUpper: number;
}

export function v3Pools(tokens: DevnetChain['tokens'], factory: Address): V3PoolPlan[] {
  return V3_POOL_SEEDS.flatMap((seed) =>
    seed.fees.map((fee) => {
      const tokenA = tokenOf(tokens, seed.a);
      const tokenB = tokenOf(tokens, seed.b);
      const aFirst = BigInt(tokenA.address) < BigInt(tokenB.address);
      const [token0, token1] = aFirst ? [tokenA, tokenB] : [tokenB, tokenA];
      const [amount0, amount1] = aFirst ? [units(tokenA, seed.amountA), units(tokenB, seed.amountB)] : [units(tokenB, seed.amountB), units(tokenA, seed.amountA)];
      return {
        label: `${seed.a}/${seed.b} ${fee / 10_000}%`,
        tokenA,
        tokenB,
        token0,
        token1,
        fee,
        address: v3PoolAddress(factory, token0.address, token1.address, fee),
        sqrtPriceX96: sqrtPriceX96(amount0, amount1),
        amount0,
        amount1,
        ...fullRange(V3_TICK_SPACING[fee]!),
      };
    }),
  );
}
