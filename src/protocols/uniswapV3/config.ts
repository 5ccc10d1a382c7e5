import { z } from 'zod';
import { Address } from '../common/configFields.ts';

/** A v3 fee tier in hundredths of a bip (500 = 0.05%): the factory enables 500, 3000 and 10000 (and 100 where its owner did). */
export const FeeTier = z.int().min(1).max(999_999);

/** One pool the deployment offers: its pair (either order) and fee tier; its address follows from the factory. */
export const UniswapV3PoolConfigSchema = z.object({ tokenA: Address, tokenB: Address, fee: FeeTier });
export type UniswapV3PoolConfig = z.infer<typeof UniswapV3PoolConfigSchema>;

/**
 * Uniswap v3 (a chain's `protocols.uniswapV3`): the factory, the router and quoter agents swap and quote through,
 * the position manager for liquidity, the WETH9 they wrap native ETH with, and the pools offered (pools are
 * permissionless: the deployment lists the ones it serves).
 */
export const UniswapV3ConfigSchema = z.object({
  factory: Address,
  /** SwapRouter02 (@uniswap/swap-router-contracts): exactInput(Single) / exactOutput(Single), multicall, unwrapWETH9. */
  swapRouter02: Address,
  /** QuoterV2 (v3-periphery): quotes by simulating the swap, with the ticks crossed and the gas. */
  quoterV2: Address,
  /** NonfungiblePositionManager: mint, increase/decrease liquidity, collect. */
  positionManager: Address,
  weth: Address,
  pools: z.array(UniswapV3PoolConfigSchema),
});
export type UniswapV3Config = z.infer<typeof UniswapV3ConfigSchema>;
