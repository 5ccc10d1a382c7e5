import { z } from 'zod';
import type { ProtocolFamily } from '../types.ts';
import { UniswapV3ConfigSchema } from './config.ts';
import { CHAINS } from './define.ts';
import { balances } from './endpoints/balances.ts';
import { liquidityAdd } from './endpoints/liquidityAdd.ts';
import { liquidityAddQuote } from './endpoints/liquidityAddQuote.ts';
import { liquidityRemove } from './endpoints/liquidityRemove.ts';
import { liquidityRemoveQuote } from './endpoints/liquidityRemoveQuote.ts';
import { pool } from './endpoints/pool.ts';
import { pools } from './endpoints/pools.ts';
import { swap } from './endpoints/swap.ts';
import { swapQuote } from './endpoints/swapQuote.ts';
import { decodeV3Revert } from './errors.ts';
import { POSITION_MANAGER_REVERTS } from './positionErrors.ts';
import { PositionSchema } from './positions.ts';

/** `pool-a-v3`: Uniswap v3 on ethereum (Sepolia) and base (Base Sepolia). docs/protocols/pool-a-v3.md. */
/** Its pool fields in short forms for the MCP tools (the API's carry patterns and /openapi.json's descriptions). */
const toolFields = {
  token_a: z.string().meta({ description: 'Pools with it (with token_b: one pair)' }),
  token_b: z.string(),
  pool: z.string().meta({ description: 'Address, or pair A/B' }),
  fee: z.int().meta({ description: 'Fee tier (500 = 0.05%); default: the best' }),
  route: z.string().meta({ description: 'Hops, e.g. WETH,500,USDC,3000,USDT' }),
  position: z.string().meta({ description: 'Position NFT token id' }),
  price_lower: z.string().meta({ description: 'Range low, in quote_token (none: full range)' }),
  price_upper: z.string().meta({ description: 'Range high' }),
  quote_token: z.string().meta({ description: 'Price unit (default token1)' }),
  amount0: z.string().meta({ description: 'Max token0, units (one side: other computed)' }),
  amount1: z.string().meta({ description: 'Max token1, units' }),
  amount0_min: z.string().meta({ description: 'Raw; default from slippage_bps' }),
  amount1_min: z.string().meta({ description: 'Raw; default from slippage_bps' }),
};

export const uniswapV3Family: ProtocolFamily<'uniswapV3'> = {
  slug: 'pool-a-v3',
  aliases: ['uniswap-v3'],
  protocol: 'Uniswap v3',
  key: 'uniswapV3',
  config: UniswapV3ConfigSchema,
  chains: CHAINS,
  description: 'Uniswap v3 on ethereum: quote and swap (exact in or out, multi-hop, native ETH), and provide liquidity in a price range.',
  // A liquidity action's position (swaps have none: their effects' position is null).
  position: PositionSchema,
  // The spec's order (4.3).
  endpoints: [pools, pool, balances, swapQuote, swap, liquidityAddQuote, liquidityAdd, liquidityRemoveQuote, liquidityRemove],
  toolFields,
  decodeRevert: (data) => decodeV3Revert(data, POSITION_MANAGER_REVERTS),
};
