import { z } from 'zod';
import type { ProtocolFamily } from '../types.ts';
import { UniswapV3ConfigSchema } from './config.ts';
import { CHAINS } from './define.ts';
import { balances } from './endpoints/balances.ts';
import { pool } from './endpoints/pool.ts';
import { pools } from './endpoints/pools.ts';
import { swap } from './endpoints/swap.ts';
import { swapQuote } from './endpoints/swapQuote.ts';
import { decodeV3Revert } from './errors.ts';

/** `pool-a-v3`: Uniswap v3 on ethereum (Sepolia) and base (Base Sepolia). docs/protocols/pool-a-v3.md. */
export const uniswapV3Family: ProtocolFamily<'uniswapV3'> = {
  slug: 'pool-a-v3',
  aliases: ['uniswap-v3'],
  protocol: 'Uniswap v3',
  key: 'uniswapV3',
  config: UniswapV3ConfigSchema,
  chains: CHAINS,
  description: 'Uniswap v3 on ethereum: quote and swap (exact in or out, multi-hop, native ETH), and provide liquidity in a price range.',
  position: z.null(),
  // The spec's order (4.3).
  endpoints: [pools, pool, balances, swapQuote, swap],
  decodeRevert: (data) => decodeV3Revert(data),
};
