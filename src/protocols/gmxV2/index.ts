import { z } from 'zod';
import type { ProtocolFamily } from '../types.ts';
import { exchangeRouterAvailability } from './availability.ts';
import { GmxV2ConfigSchema } from './config.ts';
import { CHAINS } from './define.ts';
import { balances } from './endpoints/balances.ts';
import { cancelOrder } from './endpoints/cancelOrder.ts';
import { cancelRequest } from './endpoints/cancelRequest.ts';
import { claims } from './endpoints/claims.ts';
import { createDeposit } from './endpoints/createDeposit.ts';
import { createOrder, OrderPreviewSchema } from './endpoints/createOrder.ts';
import { createWithdrawal } from './endpoints/createWithdrawal.ts';
import { markets } from './endpoints/markets.ts';
import { orders } from './endpoints/orders.ts';
import { positions } from './endpoints/positions.ts';
import { updateOrder } from './endpoints/updateOrder.ts';
import { decodeGmxRevert } from './errors.ts';
import { LiquidityPreviewSchema } from './liquidity.ts';

/** Short forms of its fields for the MCP tools (the API's carry the patterns and the long descriptions). */
const toolFields = {
  market: z.string().meta({ description: 'Market address, or index symbol (ETH)' }),
  type: z.enum(['market_increase', 'market_decrease', 'limit_increase', 'limit_decrease']),
  key: z.string().meta({ description: 'Order or request key' }),
  trigger_price: z.string().meta({ description: 'Limit: USD price to execute at' }),
  side: z.enum(['long', 'short']),
  size_usd: z.string().meta({ description: 'USD; "max" closes (decrease)' }),
  collateral_token: z.string().meta({ description: 'Long or short token; ETH for native' }),
  collateral_amount: z.string().meta({ description: 'Token units: added (increase), withdrawn (decrease)' }),
  acceptable_price: z.string().meta({ description: 'Worst USD price; default from slippage_bps' }),
  execution_fee: z.string().meta({ description: 'Wei for the keeper; default from gas price' }),
  long_amount: z.string().meta({ description: 'Token units; ETH native' }),
  short_amount: z.string(),
  amount: z.string().meta({ description: 'GM units, or "max"' }),
  amount_raw: z.string(),
  // Bounds fixed by a first plan: a model leaves them out.
  min_market_tokens: z.string(),
  min_long_amount: z.string(),
  min_short_amount: z.string(),
};

/** `perp-v2`: GMX v2 synthetics on arbitrum (Arbitrum Sepolia). docs/protocols/perp-v2.md. */
export const gmxV2Family: ProtocolFamily<'gmxV2'> = {
  slug: 'perp-v2',
  aliases: ['gmx-v2'],
  protocol: 'GMX v2',
  key: 'gmxV2',
  config: GmxV2ConfigSchema,
  chains: CHAINS,
  description:
    "GMX v2 perpetuals on arbitrum: markets, positions with PnL and liquidation price, market and limit orders followed to the keeper's " +
    'execution, order update and cancel, GM liquidity deposits and withdrawals, request cancels, funding-fee claims.',
  // Orders change no position when they are created (the keeper executes them later): effects report none.
  position: z.null(),
  preview: z.union([OrderPreviewSchema, LiquidityPreviewSchema]),
  // The spec's order (4.3).
  endpoints: [createOrder, cancelOrder, markets, positions, orders, balances, updateOrder, createDeposit, createWithdrawal, cancelRequest, claims],
  toolFields,
  decodeRevert: decodeGmxRevert,
  availability: exchangeRouterAvailability,
};
