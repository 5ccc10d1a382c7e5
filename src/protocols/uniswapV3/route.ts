import { encodePacked, type Address, type Hex } from 'viem';
import { z } from 'zod';
import { ProtocolError } from '../common/errors.ts';
import type { HopPrice } from '../common/swap.ts';
import { poolsOfPair, resolveSwapToken, type Pool, type PoolSet, type SwapToken } from './pools.ts';

/**
 * Which pools a swap crosses. One hop by default: the pair's pool at `fee`, or, with no fee given, whichever of
 * the pair's listed pools quotes best. Several hops only where the caller names them: `route`, the tokens and fee
 * tiers in order ("WETH,3000,USDC,500,USDT"), its ends token_in and token_out (ETH for WETH at an end).
 */
export const routeFields = {
  fee: z
    .int({ error: 'must be a fee tier in hundredths of a bip, e.g. 500 or 3000' })
    .min(1, 'must be a fee tier, e.g. 500 or 3000')
    .max(999_999, 'must be a fee tier, e.g. 500 or 3000')
    .optional()
    .meta({ description: "One hop: the pool's fee tier in hundredths of a bip (500 = 0.05%). Default: the pair's listed pool that quotes best", examples: [3000] }),
  route: z
    .string({ error: 'must be a route like WETH,3000,USDC,500,USDT' })
    .regex(/^[A-Za-z0-9._-]{1,42}(?:,[0-9]{1,6},[A-Za-z0-9._-]{1,42}){1,4}$/, 'must be tokens and fee tiers in turn, from token_in to token_out, e.g. WETH,3000,USDC,500,USDT (at most 4 hops)')
    .optional()
    .meta({ description: 'Several hops: the tokens and fee tiers in order, from token_in to token_out, e.g. "WETH,3000,USDC,500,USDT"', examples: ['WETH,3000,USDC,500,USDT'] }),
};

/** One pool of a route, and the way through it. */
export interface Hop {
  pool: Pool;
  tokenIn: Address;
  tokenOut: Address;
  zeroForOne: boolean;
}

export interface Route {
  hops: Hop[];
}

export const hopPrices = (r: Route): HopPrice[] => r.hops.map((h) => ({ sqrtPriceX96: h.pool.sqrtPriceX96, zeroForOne: h.zeroForOne, fee: h.pool.fee }));

const hopThrough = (pool: Pool, tokenIn: Address): Hop => {
  const zeroForOne = pool.token0.address === tokenIn;
  return { pool, tokenIn, tokenOut: zeroForOne ? pool.token1.address : pool.token0.address, zeroForOne };
};

/**
 * The candidate routes of a swap, best first once quoted: the one the caller named, the pair's pool at `fee`, or
 * every listed pool of the pair. 400 unknown_pool / invalid_route / same_token otherwise.
 */
export function candidateRoutes(set: PoolSet, tokenIn: SwapToken, tokenOut: SwapToken, ask: { fee?: number | undefined; route?: string | undefined }): Route[] {
  if (tokenIn.address === tokenOut.address) {
    throw new ProtocolError('same_token', `token_in and token_out are both ${tokenIn.address === set.weth.address ? 'WETH (ETH wraps to it)' : tokenIn.symbol}: there is nothing to swap`, { field: 'token_out' });
  }
  if (ask.route !== undefined) {
    if (ask.fee !== undefined) throw new ProtocolError('invalid_route', 'give fee (one hop) or route (several), not both', { field: 'fee' });
    return [namedRoute(set, tokenIn, tokenOut, ask.route)];
  }
  const pools = poolsOfPair(set, tokenIn.address, tokenOut.address);
  const fees = pools.map((p) => p.fee);
  const chosen = ask.fee === undefined ? pools : pools.filter((p) => p.fee === ask.fee);
  if (chosen.length === 0) {
    const pair = `${tokenIn.symbol}/${tokenOut.symbol}`;
    const why = fees.length > 0 ? `${pair} is offered at fee ${fees.join(', ')} only` : `no ${pair} pool is offered here; name a route through other tokens (route), or see GET .../pools`;
    throw new ProtocolError('unknown_pool', why, { field: ask.fee !== undefined && fees.length > 0 ? 'fee' : 'token_out' });
  }
  return chosen.map((pool) => ({ hops: [hopThrough(pool, tokenIn.address)] }));
}

function namedRoute(set: PoolSet, tokenIn: SwapToken, tokenOut: SwapToken, text: string): Route {
  const parts = text.split(',');
  const tokens = parts.filter((_, i) => i % 2 === 0).map((t) => resolveSwapToken(t, set, 'route'));
  const fees = parts.filter((_, i) => i % 2 === 1).map(Number);
  if (tokens[0]!.address !== tokenIn.address || tokens.at(-1)!.address !== tokenOut.address) {
    throw new ProtocolError('invalid_route', `the route must start at token_in (${tokenIn.symbol}) and end at token_out (${tokenOut.symbol})`, { field: 'route' });
  }
  if (tokens.slice(1, -1).some((t) => t.native)) {
    throw new ProtocolError('invalid_route', 'ETH may only be an end of a route: name WETH in between', { field: 'route' });
  }
  const hops = fees.map((fee, i) => {
    const [a, b] = [tokens[i]!, tokens[i + 1]!];
    const pool = poolsOfPair(set, a.address, b.address).find((p) => p.fee === fee);
    if (!pool) throw new ProtocolError('invalid_route', `hop ${i + 1}: no ${a.symbol}/${b.symbol} pool at fee ${fee} is offered here`, { field: 'route' });
    return hopThrough(pool, a.address);
  });
  return { hops };
}

/** The route as QuoterV2 and SwapRouter02 take it: token, fee, token, … (exact output: from the output back). */
export function encodePath(r: Route, side: 'exact_in' | 'exact_out'): Hex {
  const tokens: Address[] = [r.hops[0]!.tokenIn, ...r.hops.map((h) => h.tokenOut)];
  const fees = r.hops.map((h) => h.pool.fee);
  if (side === 'exact_out') {
    tokens.reverse();
    fees.reverse();
  }
  const types: ('address' | 'uint24')[] = [];
  const values: (Address | number)[] = [];
  tokens.forEach((t, i) => {
    types.push('address');
    values.push(t);
    if (i < fees.length) {
      types.push('uint24');
      values.push(fees[i]!);
    }
  });
  return encodePacked(types, values);
}

/** The route as answers show it. */
export const presentRoute = (r: Route, set: PoolSet) => {
  const symbol = (a: Address) => set.tokens.find((t) => t.address === a)?.symbol ?? a;
  return r.hops.map((h) => ({ token_in: symbol(h.tokenIn), token_out: symbol(h.tokenOut), fee: h.pool.fee, pool: h.pool.address }));
};
