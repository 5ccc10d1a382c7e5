import { z } from 'zod';
import type { ProtocolFamily } from '../types.ts';
import { UniswapV4ConfigSchema } from './config.ts';
import { uniswapV4Chains } from './define.ts';
import { balances } from './endpoints/balances.ts';
import { pool } from './endpoints/pool.ts';
import { pools } from './endpoints/pools.ts';
import { swap } from './endpoints/swap.ts';
import { swapQuote } from './endpoints/swapQuote.ts';
import { decodeUniswapV4Revert } from './errors.ts';

/** `pool-b-v4`: Uniswap v4 through the UniversalRouter on ethereum (Sepolia) and base (Base Sepolia). docs/protocols/pool-b-v4.md. */
export const uniswapV4Family: ProtocolFamily<'uniswapV4'> = {
  slug: 'pool-b-v4',
  aliases: ['uniswap-v4'],
  protocol: 'Uniswap v4',
  key: 'uniswapV4',
  config: UniswapV4ConfigSchema,
  chains: uniswapV4Chains,
  description: "Uniswap v4 on ethereum through the UniversalRouter: quote and swap (exact in or out, native ETH pools) with an exact Permit2 allowance.",
  position: z.null(),
  // The spec's order (4.3).
  endpoints: [pool, pools, balances, swapQuote, swap],
  decodeRevert: decodeUniswapV4Revert,
};
