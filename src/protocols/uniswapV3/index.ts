import type { ProtocolFamily } from '../types.ts';
import { UniswapV3ConfigSchema } from './config.ts';
import { liquidityAdd } from './endpoints/liquidityAdd.ts';
import { liquidityAddQuote } from './endpoints/liquidityAddQuote.ts';
import { liquidityRemove } from './endpoints/liquidityRemove.ts';
import { liquidityRemoveQuote } from './endpoints/liquidityRemoveQuote.ts';
import { decodePositionManagerRevert } from './positionErrors.ts';
import { PositionSchema } from './positions.ts';

/** `pool-a-v3`: Uniswap v3 on ethereum (Sepolia) and base (Base Sepolia). docs/protocols/pool-a-v3.md. */
export const uniswapV3Family: ProtocolFamily<'uniswapV3'> = {
  slug: 'pool-a-v3',
  aliases: ['uniswap-v3'],
  protocol: 'Uniswap v3',
  key: 'uniswapV3',
  config: UniswapV3ConfigSchema,
  chains: ['ethereum', 'base'],
  description: 'Uniswap v3 on ethereum: quote and swap (exact in or out, multi-hop, native ETH), and provide liquidity in a price range.',
  position: PositionSchema,
  endpoints: [liquidityAddQuote, liquidityAdd, liquidityRemoveQuote, liquidityRemove],
  decodeRevert: decodePositionManagerRevert,
};
