import { amountOf } from '../common/amounts.ts';
import { ProtocolError } from '../common/errors.ts';
import { readOf, type Read } from '../common/reads.ts';
import { exactAmount, midPriceOut, priceImpactBps, priceOf, sideOf, swapBounds, type SwapAsk, type SwapQuote, type SwapSide } from '../common/swap.ts';
import type { ProtocolContext } from '../types.ts';
import { quoterV2Abi } from './abi.ts';
import type { UniswapV3Config } from './config.ts';
import { loadPools, resolveSwapToken, type PoolSet, type SwapToken } from './pools.ts';
import { candidateRoutes, encodePath, hopPrices, presentRoute, type Route } from './route.ts';

/** A swap as QuoterV2 prices it now: the route chosen, the exact amount and the quoted one, the impact, the gas. */
export interface PricedSwap {
  set: PoolSet;
  side: SwapSide;
  tokenIn: SwapToken;
  tokenOut: SwapToken;
  route: Route;
  /** Exact input: amount in. Exact output: amount out. */
  exact: bigint;
  /** Exact input: amount out. Exact output: amount in. */
  quoted: bigint;
  impactBps: number;
  gasEstimate: bigint;
}

type QuoteResult = readonly [bigint, ...unknown[]];

function quoteRead(config: UniswapV3Config, r: Route, side: SwapSide, exact: bigint): Read<QuoteResult> {
  const quoter = config.quoterV2;
  if (r.hops.length === 1) {
    const h = r.hops[0]!;
    const single = { tokenIn: h.tokenIn, tokenOut: h.tokenOut, fee: h.pool.fee, sqrtPriceLimitX96: 0n };
    const label = `QuoterV2 quote through the ${h.pool.token0.symbol}/${h.pool.token1.symbol} ${h.pool.fee} pool`;
    return side === 'exact_in'
      ? readOf({ address: quoter, abi: quoterV2Abi, functionName: 'quoteExactInputSingle', args: [{ ...single, amountIn: exact }], label })
      : readOf({ address: quoter, abi: quoterV2Abi, functionName: 'quoteExactOutputSingle', args: [{ ...single, amount: exact }], label });
  }
  const path = encodePath(r, side);
  const label = `QuoterV2 quote through ${r.hops.length} pools`;
  return side === 'exact_in'
    ? readOf({ address: quoter, abi: quoterV2Abi, functionName: 'quoteExactInput', args: [path, exact], label })
    : readOf({ address: quoter, abi: quoterV2Abi, functionName: 'quoteExactOutput', args: [path, exact], label });
}

/**
 * Prices a swap through QuoterV2 (which runs the swap in an eth_call): each candidate route on its own (a pool
 * the amount cannot fill makes the quoter revert, which must not sink the others), the best kept. Exact input
 * keeps the most out, exact output the least in.
 */
export async function priceSwap(ctx: ProtocolContext<'uniswapV3'>, ask: SwapAsk & { fee?: number | undefined; route?: string | undefined }): Promise<PricedSwap> {
  const set = await loadPools(ctx);
  const tokenIn = resolveSwapToken(ask.token_in, set, 'token_in');
  const tokenOut = resolveSwapToken(ask.token_out, set, 'token_out');
  const routes = candidateRoutes(set, tokenIn, tokenOut, ask);
  const side = sideOf(ask);
  const exact = exactAmount(ask, side === 'exact_in' ? tokenIn : tokenOut);
  const config = ctx.config as UniswapV3Config;
  const quoted: { route: Route; amount: bigint; gas: bigint }[] = [];
  const failures: string[] = [];
  for (const route of routes) {
    try {
      const [result] = await ctx.read([quoteRead(config, route, side, exact)]);
      quoted.push({ route, amount: result[0], gas: result.at(-1) as bigint });
    } catch (e) {
      if (!(e instanceof ProtocolError) || e.code !== 'protocol_read_failed') throw e;
      failures.push(e.shortMessage);
    }
  }
  const better = (a: bigint, b: bigint) => (side === 'exact_in' ? a > b : a < b);
  const best = quoted.reduce<(typeof quoted)[number] | undefined>((acc, q) => (!acc || better(q.amount, acc.amount) ? q : acc), undefined);
  if (!best || best.amount === 0n) {
    throw new ProtocolError('insufficient_liquidity', `the pools cannot fill this swap: ${failures.join('; ') || 'the quote is zero'}`, {
      field: side === 'exact_in' ? 'amount_in' : 'amount_out',
    });
  }
  const impactBps = priceImpactBps(side, exact, best.amount, hopPrices(best.route));
  return { set, side, tokenIn, tokenOut, route: best.route, exact, quoted: best.amount, impactBps, gasEstimate: best.gas };
}

/** A priced swap as POST .../swap/quote answers it, with the bound at the asked slippage (default 50 bps). */
export function presentQuote(ctx: ProtocolContext<'uniswapV3'>, p: PricedSwap, ask: SwapAsk, chainNow: bigint): SwapQuote {
  const [amountIn, amountOut] = p.side === 'exact_in' ? [p.exact, p.quoted] : [p.quoted, p.exact];
  const bound = swapBounds(ask, p.quoted, chainNow).limit;
  return {
    chain: ctx.chain,
    side: p.side,
    token_in: p.tokenIn,
    token_out: p.tokenOut,
    amount_in: amountOf(amountIn, p.tokenIn.decimals),
    amount_out: amountOf(amountOut, p.tokenOut.decimals),
    price: priceOf(amountIn, p.tokenIn, amountOut, p.tokenOut),
    mid_price: midPrice(p),
    price_impact_bps: p.impactBps,
    route: presentRoute(p.route, p.set),
    estimated_gas: p.gasEstimate.toString(),
    minimum_received: p.side === 'exact_in' ? amountOf(bound, p.tokenOut.decimals) : null,
    maximum_paid: p.side === 'exact_out' ? amountOf(bound, p.tokenIn.decimals) : null,
  };
}

/** token_out per whole token_in at the pools' current √P, fees apart (one whole token_in through the mid prices). */
function midPrice(p: PricedSwap): string {
  // One whole token_in with 18 extra digits of precision, through the hops at their √P with no fee.
  const scaled = 10n ** BigInt(p.tokenIn.decimals + 18);
  const out = midPriceOut(scaled, hopPrices(p.route).map((h) => ({ ...h, fee: 0 })));
  return priceOf(scaled, p.tokenIn, out, p.tokenOut);
}
