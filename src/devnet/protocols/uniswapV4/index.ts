import type { DevnetProtocol } from '../types.ts';
import { deployUniswapV4 } from './deploy.ts';

export {
  modifyLiquidityRouterAbi,
  permit2Abi,
  poolManagerAbi,
  stateViewAbi,
  uniswapV4Contracts,
  UNISWAP_V4_SALT,
  universalRouterAbi,
  v4QuoterAbi,
} from './contracts.ts';
export { V4_POOL_SEEDS, v4PoolId, v4Pools, type V4PoolPlan } from './pools.ts';

/**
 * Uniswap v4 (core 1.0.2, periphery 1.0.3), Permit2 and UniversalRouter 2.0.0 on the devnet's ethereum chain
 * (pool-b-v4's): see README.md. After uniswapV3 in DEVNET_PROTOCOLS only by habit: the router's v3 addresses are
 * computed, not read.
 */
export const uniswapV4: DevnetProtocol<'uniswapV4'> = {
  key: 'uniswapV4',
  chains: ['ethereum'],
  deploy: deployUniswapV4,
};
