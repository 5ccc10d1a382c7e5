import type { ChainName } from '../../config/chains.ts';
import { endpointsOf } from '../types.ts';

/** The declarations of this family's endpoints (pool-a-v3: Uniswap v3). */
export const { read: defineRead, action: defineAction } = endpointsOf<'uniswapV3'>();

/** Where the family runs, the first the default: the spec's ethereum (Sepolia), and base (Base Sepolia) where configured. */
export const CHAINS: readonly [ChainName, ...ChainName[]] = ['ethereum', 'base'];
