import { z } from 'zod';
import { REQUIRED } from '../../api/http/index.ts';
import type { TokenInfo } from '../common/amounts.ts';
import { ProtocolError } from '../common/errors.ts';
import { poolsOfPair, resolvePoolToken, type V4Pool } from './pools.ts';

/** The most pools one swap crosses. */
export const MAX_HOPS = 4;

/**
 * The route fields of a swap (quote and swap alike), strings so an agent and a command line give them the same way:
 * `route` names the tokens between token_in and token_out, `fee` picks each hop's pool where a pair has several.
 * Their patterns are loose (short in the MCP tool list); resolveRoute checks the form and answers which part is wrong.
 */
export const routeFields = {
  route: z
    .string({ error: (iss) => (iss.input === undefined ? REQUIRED : 'must be a comma-separated list of tokens') })
    .regex(/^[A-Za-z0-9._,-]{1,130}$/, 'must be the intermediate tokens (symbols or addresses), comma-separated, e.g. "USDC"')
    .optional()
    .meta({ description: 'Multi-hop: tokens between (USDC)' }),
  fee: z
    .string({ error: (iss) => (iss.input === undefined ? REQUIRED : 'must be a comma-separated list of fee tiers') })
    .regex(/^[0-9/,]{1,64}$/, 'must be one fee tier per hop, comma-separated, each FEE or FEE/TICK_SPACING, e.g. "3000" or "3000/60,500"')
    .optional()
    .meta({ description: 'Pool fee per hop if ambiguous (3000,500)' }),
};

const HOP_FEE = /^[0-9]{1,7}(?:\/[0-9]{1,7})?$/;

/** One hop of a route: the pool, and which way it is crossed. */
export interface Hop {
  pool: V4Pool;
  tokenIn: TokenInfo;
  tokenOut: TokenInfo;
  /** Selling currency0 for currency1. */
  zeroForOne: boolean;
}

export interface Route {
  tokenIn: TokenInfo;
  tokenOut: TokenInfo;
  hops: Hop[];
}

const describePool = (p: V4Pool) => `${p.key.fee}/${p.key.tickSpacing}${BigInt(p.key.hooks) === 0n ? '' : ` (hooks ${p.key.hooks})`}`;

/**
 * The pools a swap crosses: token_in → each `route` token → token_out, one listed pool per hop (the one `fee`
 * names, or the pair's only one). A token not in any pool: 400 unknown_token; the same token twice: same_token;
 * a pair with no pool: unknown_pool (single hop) or invalid_route (multi-hop); a pair with several and no fee:
 * invalid_route listing them.
 */
export function resolveRoute(
  ask: { token_in: string; token_out: string; route?: string | undefined; fee?: string | undefined },
  pools: readonly V4Pool[],
  tokens: readonly TokenInfo[],
): Route {
  const tokenIn = resolvePoolToken(ask.token_in, tokens, 'token_in');
  const tokenOut = resolvePoolToken(ask.token_out, tokens, 'token_out');
  if (tokenIn.address === tokenOut.address) throw new ProtocolError('same_token', `token_in and token_out are both ${tokenIn.symbol}`, { field: 'token_out' });
  const named = ask.route ? ask.route.split(',') : [];
  if (named.length > MAX_HOPS - 1 || named.some((t) => t === '')) {
    throw new ProtocolError('invalid_route', `route names at most ${MAX_HOPS - 1} tokens, comma-separated, none empty`, { field: 'route' });
  }
  const via = named.map((t) => resolvePoolToken(t, tokens, 'route'));
  const path = [tokenIn, ...via, tokenOut];
  for (let i = 1; i < path.length; i++) {
    if (path[i]!.address === path[i - 1]!.address) throw new ProtocolError('invalid_route', `the route names ${path[i]!.symbol} twice in a row`, { field: 'route' });
  }
  const fees = ask.fee ? ask.fee.split(',') : [];
  if (fees.some((f) => !HOP_FEE.test(f))) throw new ProtocolError('invalid_route', `fee must be FEE or FEE/TICK_SPACING per hop, comma-separated (e.g. 3000/60,500); got ${ask.fee}`, { field: 'fee' });
  if (fees.length > 0 && fees.length !== path.length - 1) {
    throw new ProtocolError('invalid_route', `fee names ${fees.length} pools for a route of ${path.length - 1} (${path.map((t) => t.symbol).join(' → ')}): give one per hop`, { field: 'fee' });
  }
  const hops = path.slice(1).map((out, i): Hop => {
    const inn = path[i]!;
    const candidates = poolsOfPair(pools, inn, out);
    if (candidates.length === 0) {
      const message = `no pool offered here joins ${inn.symbol} and ${out.symbol}`;
      if (via.length === 0) throw new ProtocolError('unknown_pool', `${message}; name an intermediate token in route (GET .../pools lists the pools)`, { field: 'token_out' });
      throw new ProtocolError('invalid_route', `${message} (hop ${i + 1} of ${path.map((t) => t.symbol).join(' → ')})`, { field: 'route' });
    }
    const wanted = fees[i];
    const [fee, spacing] = wanted ? wanted.split('/').map(Number) : [];
    const matching = wanted ? candidates.filter((p) => p.key.fee === fee && (spacing === undefined || p.key.tickSpacing === spacing)) : candidates;
    const options = candidates.map(describePool).join(', ');
    if (matching.length === 0) throw new ProtocolError('invalid_route', `${inn.symbol}/${out.symbol} has no pool with fee ${wanted}; it has: ${options}`, { field: 'fee' });
    if (matching.length > 1) throw new ProtocolError('invalid_route', `${inn.symbol}/${out.symbol} has several pools (${options}): give fee (FEE/TICK_SPACING) per hop`, { field: 'fee' });
    const pool = matching[0]!;
    return { pool, tokenIn: inn, tokenOut: out, zeroForOne: pool.token0.address === inn.address };
  });
  return { tokenIn, tokenOut, hops };
}
