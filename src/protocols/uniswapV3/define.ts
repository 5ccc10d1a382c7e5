import { endpointsOf } from '../types.ts';

/** The declarations of this family's endpoints (pool-a-v3: Uniswap v3). */
export const { read: defineRead, action: defineAction } = endpointsOf<'uniswapV3'>();
