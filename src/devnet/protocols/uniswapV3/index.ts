import type { DevnetProtocol } from '../types.ts';
import { deployUniswapV3 } from './deploy.ts';

export { quoterV2Abi, swapRouter02Abi, uniswapV3Contracts, UNISWAP_V3_SALT, v3FactoryAbi, v3PoolAbi, v3PoolAddress, v3PositionManagerAbi } from './contracts.ts';
export { V3_POOL_SEEDS, V3_TICK_SPACING, v3Pools, type V3PoolPlan } from './pools.ts';

/** Uniswap v3 (core 1.0.1, periphery 1.4.4, SwapRouter02 1.3.1) on the devnet's ethereum chain (pool-a-v3's): see README.md. */
export const uniswapV3: DevnetProtocol<'uniswapV3'> = {
  key: 'uniswapV3',
  chains: ['ethereum'],
  deploy: deployUniswapV3,
};
