import { decodeErrorResult, getAddress, type Hex } from 'viem';
import { amountOf } from '../common/amounts.ts';
import { ProtocolError } from '../common/errors.ts';
import { readOf } from '../common/reads.ts';
import { exactAmount, priceImpactBps, priceOf, sideOf, swapBounds, type HopPrice, type SwapAsk, type SwapQuote, type SwapSide } from '../common/swap.ts';
import type { ProtocolContext } from '../types.ts';
import { v4QuoterAbi } from './abi.ts';
import { loadPools, slot0Read } from './pools.ts';
import { resolveRoute, type Route } from './route.ts';

/** The router's amounts are uint128: a larger one is no amount a pool can fill. */
const MAX_UINT128 = 2n ** 128n - 1n;

/** A swap's body as this family takes it: the shared fields and the route. */
export type V4SwapAsk = SwapAsk & { route?: string | undefined; fee?: string | undefined };

/** What V4Quoter answered for a route, with the pools' prices it was quoted against. */
export interface V4Quote {
  route: Route;
  side: SwapSide;
  exact: bigint;
  quoted: bigint;
  gasEstimate: bigint;
  hops: HopPrice[];
  impactBps: number;
}

/** The V4Quoter read for a route: the single-pool functions for one hop, the path ones otherwise. */
function quoterRead(quoter: Hex, route: Route, side: SwapSide, exact: bigint) {
  const single = route.hops.length === 1;
  const label = `V4Quoter ${side === 'exact_in' ? 'exact input' : 'exact output'} ${route.tokenIn.symbol} → ${route.tokenOut.symbol}`;
  if (single) {
    const h = route.hops[0]!;
    const params = { poolKey: h.pool.key, zeroForOne: h.zeroForOne, exactAmount: exact, hookData: '0x' as Hex };
    return readOf({ address: quoter, abi: v4QuoterAbi, functionName: side === 'exact_in' ? 'quoteExactInputSingle' : 'quoteExactOutputSingle', args: [params], label });
  }
  const path = route.hops.map((h) => ({
    intermediateCurrency: side === 'exact_in' ? h.tokenOut.address : h.tokenIn.address,
    fee: h.pool.key.fee,
    tickSpacing: h.pool.key.tickSpacing,
    hooks: h.pool.key.hooks,
    hookData: '0x' as Hex,
  }));
  const exactCurrency = side === 'exact_in' ? route.tokenIn.address : route.tokenOut.address;
  return readOf({ address: quoter, abi: v4QuoterAbi, functionName: side === 'exact_in' ? 'quoteExactInput' : 'quoteExactOutput', args: [{ exactCurrency, path, exactAmount: exact }], label });
}

/** V4Quoter's revert when the pools cannot fill the amount: NotEnoughLiquidity, wrapped in UnexpectedRevertBytes. */
function cannotFill(e: unknown): boolean {
  const data = ((e as { cause?: { revertData?: Hex } }).cause?.revertData ?? '0x') as Hex;
  try {
    let d = decodeErrorResult({ abi: v4QuoterAbi, data });
    if (d.errorName === 'UnexpectedRevertBytes') d = decodeErrorResult({ abi: v4QuoterAbi, data: d.args[0] });
    return d.errorName === 'NotEnoughLiquidity';
  } catch {
    return false;
  }
}

/**
 * A swap quoted through V4Quoter, and the pools' mid prices (StateView.getSlot0) read at the same block, in one
 * batch: the price impact is the quote against those prices after fees. A route the pools cannot fill is
 * 400 insufficient_liquidity.
 */
export async function quoteSwap(ctx: ProtocolContext<'uniswapV4'>, ask: V4SwapAsk): Promise<V4Quote> {
  const { pools, tokens } = await loadPools(ctx);
  const route = resolveRoute(ask, pools, tokens);
  const side = sideOf(ask);
  const exact = exactAmount(ask, side === 'exact_in' ? route.tokenIn : route.tokenOut);
  const field = side === 'exact_in' ? 'amount_in' : 'amount_out';
  if (exact > MAX_UINT128) throw new ProtocolError('invalid_amount', `${field} is larger than any pool can take (a uint128)`, { field });
  const sv = getAddress(ctx.config.stateView);
  const slot0s = route.hops.map((h) => slot0Read(sv, h.pool.id));
  const exactToken = side === 'exact_in' ? route.tokenIn : route.tokenOut;
  // One batch: the quote and the prices it is measured against are of the same block.
  const values = await ctx.read([...slot0s, quoterRead(getAddress(ctx.config.v4Quoter), route, side, exact)]).catch((e: unknown) => {
    if (e instanceof ProtocolError && e.code === 'protocol_read_failed' && cannotFill(e)) {
      const pools = route.hops.map((h) => `${h.tokenIn.symbol}/${h.tokenOut.symbol} ${h.pool.key.fee}`).join(', ');
      throw new ProtocolError('insufficient_liquidity', `the pools of this route (${pools}) cannot fill ${amountOf(exact, exactToken.decimals).formatted} ${exactToken.symbol}`, { field });
    }
    throw e;
  });
  const [quoted, gasEstimate] = values[slot0s.length] as readonly [bigint, bigint];
  const hops = route.hops.map((h, i): HopPrice => {
    const [sqrtPriceX96, , , lpFee] = values[i] as readonly [bigint, number, number, number];
    return { sqrtPriceX96, zeroForOne: h.zeroForOne, fee: lpFee };
  });
  return { route, side, exact, quoted, gasEstimate, hops, impactBps: priceImpactBps(side, exact, quoted, hops) };
}

/** The quote as the API answers it (SwapQuoteSchema), with the bound a swap would set at `slippageBps` (default 50). */
export function presentQuote(chain: string, q: V4Quote, slippageBps?: number): SwapQuote {
  const { route, side, exact, quoted } = q;
  const [amountIn, amountOut] = side === 'exact_in' ? [exact, quoted] : [quoted, exact];
  const tin = route.tokenIn;
  const tout = route.tokenOut;
  // The mid price: what one whole token_in buys at the pools' prices, fees apart (a large amount keeps precision).
  const unit = 10n ** BigInt(tin.decimals + 12);
  const ideal = q.hops.reduce((a, h) => {
    const p2 = h.sqrtPriceX96 * h.sqrtPriceX96;
    return h.zeroForOne ? (a * p2) >> 192n : (a << 192n) / p2;
  }, unit);
  // swapBounds reads the side and the slippage of an ask, not its amount: the bound the swap endpoint would set now.
  const exactField = side === 'exact_in' ? { amount_in: '1' } : { amount_out: '1' };
  const bound = swapBounds({ token_in: tin.symbol, token_out: tout.symbol, ...exactField, slippage_bps: slippageBps }, quoted, 0n).limit;
  return {
    chain,
    side,
    token_in: tin,
    token_out: tout,
    amount_in: amountOf(amountIn, tin.decimals),
    amount_out: amountOf(amountOut, tout.decimals),
    price: priceOf(amountIn, tin, amountOut, tout),
    mid_price: priceOf(unit, tin, ideal, tout),
    price_impact_bps: q.impactBps,
    route: route.hops.map((h) => ({ token_in: h.tokenIn.symbol, token_out: h.tokenOut.symbol, fee: h.pool.key.fee, pool: h.pool.id })),
    estimated_gas: q.gasEstimate.toString(),
    minimum_received: side === 'exact_in' ? amountOf(bound, tout.decimals) : null,
    maximum_paid: side === 'exact_out' ? amountOf(bound, tin.decimals) : null,
  };
}
