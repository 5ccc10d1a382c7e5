import { formatUnits, parseUnits } from 'viem';
import { z } from 'zod';
import { amountOf, AmountSchema, tokenUnits, type TokenInfo } from '../../common/amounts.ts';
import { ProtocolError } from '../../common/errors.ts';
import { actionFields, decimalAmount, TokenInput } from '../../common/inputs.ts';
import { balanceOfRead, resolveToken } from '../../common/tokens.ts';
import type { AgentContext } from '../../types.ts';
import type { GmxV2Config } from '../config.ts';
import { CHAINS, defineAction } from '../define.ts';
import { isWnt, nativeEth } from '../wnt.ts';
import { followOrder } from '../follow.ts';
import { DEFAULT_ORDER_SLIPPAGE_BPS, ExecutionFeeInput, MarketRef, SlippageBps, UsdDecimal } from '../inputs.ts';
import { positionKey } from '../keys.ts';
import { chargedExecutionFee } from '../executionFees.ts';
import { findMarket } from '../markets.ts';
import { marketOrderAcceptablePrice } from '../math/acceptablePrice.ts';
import { decreaseQuote } from '../math/decrease.ts';
import { increaseQuote, type ExistingPosition } from '../math/increase.ts';
import { positionFigures } from '../math/positionFigures.ts';
import { priceToContract, tokensOfUsd } from '../math/units.ts';
import { checkOrderExecutes, orderCalls, type OrderSpec } from '../orderCalls.ts';
import { simulationPricesOf } from '../keeperSimulation.ts';
import { ORDER_TYPES } from '../orderTypes.ts';
import { multiple, PriceUsd, Side, usd, Usd } from '../present.ts';
import { collateralPrices, snapshot, type PerpMarket } from '../snapshot.ts';
import { positionInfos } from './positions.ts';

const OrderInput = z.object({
  ...actionFields(CHAINS),
  type: z.enum(['market_increase', 'market_decrease', 'limit_increase', 'limit_decrease']).meta({
    description:
      'market_increase opens or adds to a position, market_decrease reduces or closes one, at the next oracle price; limit_increase ' +
      'and limit_decrease wait for the index price to reach trigger_price (a long buys at or below it, sells at or above it; a short the reverse)',
  }),
  market: MarketRef,
  side: Side.meta({ description: 'long profits when the index price rises, short when it falls' }),
  size_usd: z
    .union([UsdDecimal('USD amount'), z.literal('max')])
    .meta({ description: 'The size to add (increase) or remove (decrease), in USD; "max" closes the whole position (decrease only)', examples: ['1500'] }),
  collateral_token: TokenInput.meta({
    description: "The position's collateral: the market's long or short token (ETH for its WETH, paid or paid out in native ETH)",
    examples: ['USDC', 'ETH'],
  }),
  collateral_amount: decimalAmount(false)
    .optional()
    .meta({ description: 'Increase: the collateral to add (required). Decrease: the collateral to withdraw besides the PnL (default 0). Token units.' }),
  slippage_bps: SlippageBps.optional()
    .meta({ description: `Tolerated move of the execution price from the expected one, basis points (default ${DEFAULT_ORDER_SLIPPAGE_BPS})`, examples: [50] }),
  trigger_price: UsdDecimal('price in USD')
    .optional()
    .meta({ description: 'Limit orders only (and required there): the index price in USD at which the keeper executes it', examples: ['2800'] }),
  acceptable_price: UsdDecimal('price in USD')
    .optional()
    .meta({ description: 'The worst index price to execute at, USD (default: the expected price moved by slippage_bps); the keeper cancels the order past it' }),
  execution_fee: ExecutionFeeInput,
});
type OrderInputT = z.output<typeof OrderInput>;

export const OrderPreviewSchema = z
  .object({
    mark_price: PriceUsd.meta({ description: 'The oracle price the order is marked at now (max for a long increase, min for a short one; the reverse to decrease)' }),
    expected_price: PriceUsd.meta({ description: 'The price it would execute at now, its own price impact included' }),
    acceptable_price: PriceUsd,
    price_impact_usd: Usd,
    position_fee_usd: Usd,
    execution_fee: AmountSchema.meta({ description: 'Native ETH sent for the keeper (refunded in part)' }),
    size_delta_usd: Usd,
    receive: z
      .object({ token: z.string(), amount: z.string(), usd: Usd, realized_pnl_usd: Usd })
      .nullable()
      .meta({ description: 'A decrease: what the wallet would receive, and the PnL it realises' }),
    position_after: z
      .object({ size_usd: Usd, collateral_usd: Usd, entry_price: PriceUsd.nullable(), leverage: z.string().nullable(), liquidation_price: PriceUsd.nullable() })
      .nullable()
      .meta({ description: 'The position once executed; null when the order closes it' }),
  })
  .meta({ id: 'PerpOrderPreview' });

export const createOrder = defineAction({
  path: 'orders',
  summary: 'Open, increase, reduce or close a position with a market order',
  description:
    "Creates a GMX v2 market order from the wallet in one operation: the execution fee in native ETH for GMX's keeper (from the " +
    'current gas price; the unspent part is refunded), the collateral (approved exactly), and the order with an acceptable price ' +
    "fixed now from slippage_bps (default 50). Before it is sent, GMX's own execution is simulated at the oracle's prices, as GMX's " +
    'clients do: an order the keeper would cancel is refused with the reason. The request is `confirmed` once the order exists; ' +
    "what the keeper then does is status.order (executed with its fill price, or cancelled with the reason) and a webhook event.",
  input: OrderInput,
  follow: followOrder,
  async plan(ctx, input) {
    const config = ctx.config as GmxV2Config;
    const snap = await snapshot(ctx);
    const m = findMarket(snap.perp, input.market);
    if (m.priced.isDisabled) throw new ProtocolError('unknown_market', `${m.name} is disabled`, { field: 'market' });
    const isLong = input.side === 'long';
    const isIncrease = input.type.endsWith('_increase');
    const trigger = triggerOf(input);
    // A limit order is previewed and its execution simulated at its trigger price: where the keeper will execute it.
    const at = trigger === undefined ? m : atIndexPrice(m, trigger);
    const ethAllowed = isWnt(config, m.long) || isWnt(config, m.short);
    const token = resolveToken(input.collateral_token, [m.long, m.short, ...(ethAllowed ? [nativeEth(config)] : [])], 'collateral_token', `${m.name}'s collateral`);
    const collateralToken = token.native ? config.wnt : token.address;

    const [fee, list] = await Promise.all([chargedExecutionFee(ctx, isIncrease ? 'increase' : 'decrease', input.execution_fee), positionInfos(ctx, snap)]);
    const key = positionKey(ctx.wallet, m.address, collateralToken, isLong).toLowerCase();
    const info = list.find((p) => p.positionKey.toLowerCase() === key && p.position.numbers.sizeInUsd > 0n);
    const reader = info && {
      sizeInUsd: info.position.numbers.sizeInUsd,
      sizeInTokens: info.position.numbers.sizeInTokens,
      collateralAmount: info.position.numbers.collateralAmount,
      pendingImpactAmount: info.position.numbers.pendingImpactAmount,
      isLong,
      pendingBorrowingFeesUsd: info.fees.borrowing.borrowingFeeUsd,
      fundingFeeAmount: info.fees.funding.fundingFeeAmount,
    };
    const figures = reader && positionFigures(at.priced, reader, collateralPrices(at, collateralToken));
    const existing: ExistingPosition | undefined = reader && figures && { ...reader, collateralUsd: figures.collateralUsd, pendingFundingFeesUsd: figures.pendingFundingFeesUsd, pendingImpactUsd: figures.pendingImpactUsd };

    const atCollateral = collateralPrices(at, collateralToken);
    const sized = isIncrease ? increaseOf(at, input, token, atCollateral, existing) : decreaseOf(at, input, token, atCollateral, existing);
    const slippage = input.slippage_bps ?? DEFAULT_ORDER_SLIPPAGE_BPS;
    const price = marketOrderAcceptablePrice(at.priced, { sizeDeltaUsd: sized.sizeDeltaUsd, isIncrease, isLong, slippageBps: slippage });
    const acceptable = input.acceptable_price !== undefined ? parseUnits(input.acceptable_price, 30) : price.acceptablePrice;

    const order: OrderSpec = {
      market: m.address,
      collateralToken,
      ...(isIncrease && { send: { native: token.native === true, amount: sized.collateralAmount } }),
      orderType: ORDER_TYPES[input.type],
      isLong,
      sizeDeltaUsd: sized.sizeDeltaUsd,
      initialCollateralDeltaAmount: isIncrease ? 0n : sized.collateralAmount,
      triggerPrice: trigger === undefined ? 0n : priceToContract(trigger, m.index.decimals),
      acceptablePrice: priceToContract(acceptable, m.index.decimals),
      executionFee: fee,
      unwrap: token.native === true,
    };
    await ensureFunds(ctx, order, token);
    await checkOrderExecutes(ctx, order, simulationPricesOf(at, await ctx.now()));

    return {
      calls: orderCalls(config, ctx.wallet, order),
      tokens: token.native ? [nativeEth(config)] : [nativeEth(config), token],
      bounds: { acceptable_price: usd(acceptable), execution_fee: fee.toString() },
      settles: trigger === undefined ? 'next_price' : 'at_trigger',
      preview: {
        mark_price: usd(price.markPrice),
        expected_price: usd(price.impactedPrice),
        acceptable_price: usd(acceptable),
        price_impact_usd: usd(price.priceImpactUsd),
        position_fee_usd: usd(sized.positionFeeUsd),
        execution_fee: amountOf(fee, 18),
        size_delta_usd: usd(sized.sizeDeltaUsd),
        receive: sized.receive,
        position_after: sized.after,
      },
    };
  },
});

/** The trigger price of a limit order (USD, 30 decimals); a market order takes none. */
function triggerOf(input: OrderInputT): bigint | undefined {
  const limit = input.type.startsWith('limit_');
  if (limit && input.trigger_price === undefined) throw new ProtocolError('invalid_price', `a ${input.type} order needs trigger_price: the index price it waits for`, { field: 'trigger_price' });
  if (!limit && input.trigger_price !== undefined) throw new ProtocolError('invalid_price', `a ${input.type} order executes at the next price: trigger_price is for limit orders`, { field: 'trigger_price' });
  return input.trigger_price === undefined ? undefined : parseUnits(input.trigger_price, 30);
}

/** The market as it would be with the index token at `price` (a limit order's trigger), the other tokens as now. */
function atIndexPrice(m: PerpMarket, price: bigint): PerpMarket {
  const decimals = m.index.decimals;
  const contract = { min: priceToContract(price, decimals), max: priceToContract(price, decimals) };
  const isIndex = (t: { address: string }) => t.address.toLowerCase() === m.index.address.toLowerCase();
  const index = { decimals, min: price, max: price };
  return {
    ...m,
    contractPrices: {
      indexTokenPrice: contract,
      longTokenPrice: isIndex(m.long) ? contract : m.contractPrices.longTokenPrice,
      shortTokenPrice: isIndex(m.short) ? contract : m.contractPrices.shortTokenPrice,
    },
    priced: {
      ...m.priced,
      prices: { index, long: isIndex(m.long) ? { ...index, decimals: m.long.decimals } : m.priced.prices.long, short: isIndex(m.short) ? { ...index, decimals: m.short.decimals } : m.priced.prices.short },
    },
  };
}

interface Sized {
  sizeDeltaUsd: bigint;
  /** Increase: collateral sent. Decrease: collateral withdrawn. */
  collateralAmount: bigint;
  positionFeeUsd: bigint;
  receive: z.infer<typeof OrderPreviewSchema>['receive'];
  after: z.infer<typeof OrderPreviewSchema>['position_after'];
}

const collateralAmountOf = (input: OrderInputT, token: TokenInfo): bigint | undefined =>
  input.collateral_amount === undefined ? undefined : tokenUnits(input.collateral_amount, token, 'collateral_amount');

function increaseOf(m: PerpMarket, input: OrderInputT, token: TokenInfo, collateral: ReturnType<typeof collateralPrices>, existing: ExistingPosition | undefined): Sized {
  if (input.size_usd === 'max') throw new ProtocolError('invalid_amount', 'size_usd "max" closes a position: it is for market_decrease only', { field: 'size_usd' });
  const collateralAmount = collateralAmountOf(input, token);
  if (collateralAmount === undefined) throw new ProtocolError('invalid_amount', 'an increase needs collateral_amount: the collateral it adds', { field: 'collateral_amount' });
  const sizeDeltaUsd = parseUnits(input.size_usd, 30);
  const markPrice = input.side === 'long' ? m.priced.prices.index.max : m.priced.prices.index.min;
  const q = increaseQuote(m.priced, {
    isLong: input.side === 'long',
    collateral,
    collateralAmount,
    size: { indexTokenAmount: tokensOfUsd(sizeDeltaUsd, m.index.decimals, markPrice) ?? 0n },
    ...(existing && { existing }),
  });
  return {
    sizeDeltaUsd,
    collateralAmount,
    positionFeeUsd: q.positionFeeUsd,
    receive: null,
    after: {
      size_usd: usd(q.next.sizeInUsd),
      collateral_usd: usd(q.next.collateralUsd),
      entry_price: usd(q.next.entryPrice),
      leverage: multiple(q.next.leverageBps),
      liquidation_price: q.next.liquidationPrice === undefined ? null : usd(q.next.liquidationPrice),
    },
  };
}

function decreaseOf(m: PerpMarket, input: OrderInputT, token: TokenInfo, collateral: ReturnType<typeof collateralPrices>, existing: ExistingPosition | undefined): Sized {
  if (!existing) {
    throw new ProtocolError('unknown_position', `the wallet has no ${input.side} position in ${m.name} with ${token.symbol} collateral to decrease`, { field: 'market' });
  }
  const sizeDeltaUsd = input.size_usd === 'max' ? existing.sizeInUsd : parseUnits(input.size_usd, 30);
  if (sizeDeltaUsd > existing.sizeInUsd) {
    throw new ProtocolError('invalid_amount', `size_usd ${usd(sizeDeltaUsd)} is more than the position's ${usd(existing.sizeInUsd)}`, { field: 'size_usd' });
  }
  const withdraw = collateralAmountOf(input, token) ?? 0n;
  if (withdraw > existing.collateralAmount) {
    throw new ProtocolError('invalid_amount', `collateral_amount is more than the position's ${formatUnits(existing.collateralAmount, token.decimals)} ${token.symbol}`, { field: 'collateral_amount' });
  }
  const q = decreaseQuote(m.priced, { position: existing, collateral, sizeDeltaUsd });
  return {
    sizeDeltaUsd,
    collateralAmount: withdraw,
    positionFeeUsd: q.positionFeeUsd,
    receive: { token: token.symbol, amount: formatUnits(q.receiveTokenAmount, token.decimals), usd: usd(q.receiveUsd), realized_pnl_usd: usd(q.realizedPnlUsd) },
    after: q.isFullClose
      ? null
      : {
          size_usd: usd(q.next.sizeInUsd),
          collateral_usd: usd(q.next.collateralUsd),
          entry_price: null,
          leverage: multiple(q.next.leverageBps),
          liquidation_price: q.next.liquidationPrice === undefined ? null : usd(q.next.liquidationPrice),
        },
  };
}

/** The wallet must hold the ETH the order sends (the fee, native collateral) and the token collateral. */
async function ensureFunds(ctx: AgentContext<'gmxV2'>, o: OrderSpec, token: TokenInfo): Promise<void> {
  const ethNeeded = o.executionFee + (o.send?.native ? o.send.amount : 0n);
  const [eth, [held]] = await Promise.all([ctx.nativeBalance(), o.send && !o.send.native ? ctx.read([balanceOfRead(token.address, ctx.wallet)]) : Promise.resolve([undefined])]);
  if (eth < ethNeeded) {
    throw new ProtocolError('insufficient_balance', `the wallet holds ${formatUnits(eth, 18)} ETH, less than the ${formatUnits(ethNeeded, 18)} ETH this order sends (execution fee${o.send?.native ? ' and collateral' : ''})`, {
      field: o.send?.native ? 'collateral_amount' : 'execution_fee',
    });
  }
  if (held !== undefined && o.send && held < o.send.amount) {
    throw new ProtocolError('insufficient_balance', `the wallet holds ${formatUnits(held, token.decimals)} ${token.symbol}, less than collateral_amount`, { field: 'collateral_amount' });
  }
}
