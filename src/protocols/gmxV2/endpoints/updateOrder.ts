import { parseUnits, type Hex } from 'viem';
import { z } from 'zod';
import { amountOf } from '../../common/amounts.ts';
import { callOf } from '../../common/calls.ts';
import { ProtocolError } from '../../common/errors.ts';
import { actionFields } from '../../common/inputs.ts';
import { exchangeRouterAbi } from '../abis.generated.ts';
import type { GmxV2Config } from '../config.ts';
import { CHAINS, defineAction } from '../define.ts';
import { nativeEth } from '../wnt.ts';
import { marketsNow } from '../markets.ts';
import { priceFromContract, priceToContract } from '../math/units.ts';
import { ORDER_TYPES, orderTypeName } from '../orderTypes.ts';
import { OrderKeyInput, ownOrder } from '../ownOrder.ts';
import { usd } from '../present.ts';
import { acceptablePriceWithSlippage } from '../math/acceptablePrice.ts';
import { DEFAULT_ORDER_SLIPPAGE_BPS, SlippageBps, UsdDecimal } from '../inputs.ts';

export const updateOrder = defineAction({
  path: 'orders/update',
  summary: "Change a pending limit order's size, trigger price or acceptable price",
  description:
    "Changes a pending limit order of the wallet (GMX's updateOrder: a market order cannot be changed): its size_usd, its " +
    'trigger_price, its acceptable_price; what is not given stays as it is. A frozen order is unfrozen. The request that created the ' +
    'order goes on following it (its status.order and webhook events).',
  input: z.object({
    ...actionFields(CHAINS),
    key: OrderKeyInput,
    size_usd: UsdDecimal('USD amount').optional().meta({ description: 'The new size, USD' }),
    trigger_price: UsdDecimal('price in USD').optional().meta({ description: 'The new trigger price, USD per index token' }),
    acceptable_price: UsdDecimal('price in USD')
      .optional()
      .meta({ description: 'The new worst execution price, USD per index token (default with a new trigger_price: it moved by slippage_bps)' }),
    slippage_bps: SlippageBps.optional()
      .meta({ description: `With a new trigger_price and no acceptable_price: how far past the trigger it may execute (default ${DEFAULT_ORDER_SLIPPAGE_BPS})` }),
  }),
  async plan(ctx, input) {
    const config = ctx.config as GmxV2Config;
    const order = await ownOrder(ctx, input.key as Hex);
    const n = order.numbers;
    if (n.orderType !== ORDER_TYPES.limit_increase && n.orderType !== ORDER_TYPES.limit_decrease) {
      throw new ProtocolError('order_not_updatable', `a ${orderTypeName(n.orderType)} order cannot be changed: only limit orders can`, { field: 'key' });
    }
    if (input.size_usd === undefined && input.trigger_price === undefined && input.acceptable_price === undefined) {
      throw new ProtocolError('invalid_price', 'give what to change: size_usd, trigger_price or acceptable_price', { field: 'trigger_price' });
    }
    const market = (await marketsNow(ctx)).markets.find((m) => m.address.toLowerCase() === order.addresses.market.toLowerCase());
    if (!market) throw new ProtocolError('unknown_order', `order ${input.key} is in a market this deployment does not serve`, { field: 'key' });
    const decimals = market.index.decimals;
    const contract = (price: string | undefined, now: bigint) => (price === undefined ? now : priceToContract(parseUnits(price, 30), decimals));
    const sizeDeltaUsd = input.size_usd === undefined ? n.sizeDeltaUsd : parseUnits(input.size_usd, 30);
    const triggerPrice = contract(input.trigger_price, n.triggerPrice);
    // A new trigger moves the acceptable price with it, unless the caller gives one: else the order would be frozen
    // at its new trigger for an acceptable price set for the old one.
    const followed =
      input.acceptable_price === undefined && input.trigger_price !== undefined
        ? usd(acceptablePriceWithSlippage(parseUnits(input.trigger_price, 30), input.slippage_bps ?? DEFAULT_ORDER_SLIPPAGE_BPS, n.orderType === ORDER_TYPES.limit_increase, order.flags.isLong))
        : input.acceptable_price;
    const acceptablePrice = contract(followed, n.acceptablePrice);
    return {
      calls: [
        callOf({
          address: config.exchangeRouter,
          abi: exchangeRouterAbi,
          functionName: 'updateOrder',
          args: [input.key as Hex, sizeDeltaUsd, acceptablePrice, triggerPrice, n.minOutputAmount, n.validFromTime, order.flags.autoCancel],
        }),
      ],
      tokens: [nativeEth(config)],
      bounds: { acceptable_price: usd(priceFromContract(acceptablePrice, decimals)) },
      preview: {
        mark_price: usd(priceFromContract(triggerPrice, decimals)),
        expected_price: usd(priceFromContract(triggerPrice, decimals)),
        acceptable_price: usd(priceFromContract(acceptablePrice, decimals)),
        price_impact_usd: '0',
        position_fee_usd: '0',
        execution_fee: amountOf(n.executionFee, 18),
        size_delta_usd: usd(sizeDeltaUsd),
        receive: null,
        position_after: null,
      },
    };
  },
});
