import { z } from 'zod';
import type { ProtocolFamily } from '../types.ts';
import { UniswapV4ConfigSchema } from './config.ts';

/** `pool-b-v4`: Uniswap v4 through the UniversalRouter on ethereum (Sepolia) and base (Base Sepolia). docs/protocols/pool-b-v4.md. */
export const uniswapV4Family: ProtocolFamily<'uniswapV4'> = {
  slug: 'pool-b-v4',
  aliases: ['uniswap-v4'],
  protocol: 'Uniswap v4',
  key: 'uniswapV4',
  config: UniswapV4ConfigSchema,
  chains: ['ethereum', 'base'],
  description: "Uniswap v4 on ethereum through the UniversalRouter: quote and swap (exact in or out, native ETH pools) with an exact Permit2 allowance.",
  position: z.null(),
  endpoints: [],
  decodeRevert: () => undefined,
};
