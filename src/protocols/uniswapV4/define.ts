import { endpointsOf } from '../types.ts';

/** The declarations of this family's endpoints (pool-b-v4: Uniswap v4). */
export const { read: defineRead, action: defineAction } = endpointsOf<'uniswapV4'>();

/** The chains the family runs on, the first its default (index.ts declares them; the endpoints' `chain` input takes them). */
export const uniswapV4Chains = ['ethereum', 'base'] as const;
