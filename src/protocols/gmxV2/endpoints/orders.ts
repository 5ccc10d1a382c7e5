import { formatUnits } from 'viem';
import { z } from 'zod';
import { ChainOut } from '../../../api/http/index.ts';
import { AmountSchema, amountOf } from '../../common/amounts.ts';
import { agentQueryFields } from '../../common/inputs.ts';
import { readOf } from '../../common/reads.ts';
import { readerAbi } from '../abis.generated.ts';
import type { GmxV2Config } from '../config.ts';
import { CHAINS, defineRead } from '../define.ts';
import { priceFromContract } from '../math/units.ts';
import { orderTypeName } from '../orderTypes.ts';
import { PriceUsd, Side, usd, Usd } from '../present.ts';
import { marketsNow } from '../markets.ts';
import { pendingRequests, PendingRequestSchema, presentRequests } from '../pendingRequests.ts';

const ORDERS_PAGE = 100n;

export const PendingOrderSchema = z
  .object({
    key: z.string().meta({ description: "GMX's order key: what update and cancel take, and status.order.key of the request that created it" }),
    type: z.string().meta({ description: 'market_increase, market_decrease, limit_increase, limit_decrease, stop_loss_decrease, …' }),
    market: z.string(),
    market_name: z.string().nullable(),
    side: Side,
    size_usd: Usd,
    collateral_token: z.string(),
    collateral_amount: z.string().meta({ description: 'Collateral sent with an increase, or to withdraw with a decrease (decimal, in the token)' }),
    trigger_price: PriceUsd.nullable(),
    acceptable_price: PriceUsd,
    execution_fee: AmountSchema.meta({ description: 'Native ETH held for the keeper; what it does not spend is refunded' }),
    frozen: z.boolean().meta({ description: 'A limit order the keeper froze after a failed execution' }),
    updated_at: z.string(),
  })
  .meta({ id: 'PerpOrder' });

export const orders = defineRead({
  path: 'orders',
  summary: "The wallet's orders, deposits and withdrawals the keeper has yet to act on",
  description:
    "The agent's GMX v2 orders still waiting for the keeper: their key, type, market, side, size, collateral, acceptable and trigger " +
    'price, the execution fee held, and whether a limit order is frozen; and its pending deposits and withdrawals of liquidity ' +
    '(requests: what they send, the least they accept, and when the account may cancel them). A market order, a deposit or a ' +
    'withdrawal usually leaves these lists within seconds.',
  query: z.object(agentQueryFields(CHAINS)),
  output: z.object({ agent_id: z.string(), chain: ChainOut, wallet: z.string(), orders: z.array(PendingOrderSchema), requests: z.array(PendingRequestSchema) }),
  agent: true,
  async run(ctx) {
    const config = ctx.config as GmxV2Config;
    const [[list], now, requests] = await Promise.all([
      ctx.read([readOf({ address: config.reader, abi: readerAbi, functionName: 'getAccountOrders', args: [config.dataStore, ctx.wallet, 0n, ORDERS_PAGE] })]),
      marketsNow(ctx),
      pendingRequests(ctx),
    ]);
    const presented = list.map(({ orderKey, order }) => {
      const market = now.markets.find((m) => m.address.toLowerCase() === order.addresses.market.toLowerCase());
      const collateral = now.tokens.get(order.addresses.initialCollateralToken);
      const indexDecimals = market?.index.decimals ?? 18;
      const price = (x: bigint) => usd(priceFromContract(x, indexDecimals));
      const n = order.numbers;
      return {
        key: orderKey,
        type: orderTypeName(n.orderType),
        market: order.addresses.market,
        market_name: market?.name ?? null,
        side: order.flags.isLong ? ('long' as const) : ('short' as const),
        size_usd: usd(n.sizeDeltaUsd),
        collateral_token: collateral?.symbol ?? order.addresses.initialCollateralToken,
        collateral_amount: collateral ? formatUnits(n.initialCollateralDeltaAmount, collateral.decimals) : n.initialCollateralDeltaAmount.toString(),
        trigger_price: n.triggerPrice === 0n ? null : price(n.triggerPrice),
        acceptable_price: price(n.acceptablePrice),
        execution_fee: amountOf(n.executionFee, 18),
        frozen: order.flags.isFrozen,
        updated_at: new Date(Number(n.updatedAtTime) * 1000).toISOString(),
      };
    });
    return { agent_id: ctx.agentId, chain: ctx.chain, wallet: ctx.wallet, orders: presented, requests: presentRequests(requests, now) };
  },
});
