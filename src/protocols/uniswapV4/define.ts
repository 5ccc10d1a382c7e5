import { endpointsOf } from '../types.ts';

/** The declarations of this family's endpoints (pool-b-v4: Uniswap v4). */
export const { read: defineRead, action: defineAction } = endpointsOf<'uniswapV4'>();
