import { uniswapV4Chains } from '../define.ts';

/** The chains pool-b-v4 runs on (the family's list), for the endpoints' `chain` input. */
export const CHAINS = uniswapV4Chains;
