import { getAddress } from 'viem';
import { ProtocolError } from '../../common/errors.ts';
import { boundsRecord, checkPriceImpact, sideOf, swapBounds, swapInput } from '../../common/swap.ts';
import { defineAction } from '../define.ts';
import { swapCalls } from '../encode.ts';
import { quoteSwap, type V4SwapAsk } from '../quote.ts';
import { routeFields } from '../route.ts';
import { CHAINS } from './common.ts';

const MAX_UINT128 = 2n ** 128n - 1n;

export const swap = defineAction({
  path: 'swap',
  summary: 'Swap via the UniversalRouter',
  description:
    'Quotes, refuses a price impact over max_price_impact_bps, fixes the bounds (amount_out_minimum / amount_in_maximum from ' +
    'slippage_bps, a deadline), then one batch: an exact Permit2 allowance for an ERC-20 in (reset after exact output), the router call.',
  input: swapInput(CHAINS, routeFields),
  replan: true,
  async plan(ctx, body) {
    // swapInput's alternatives type their optional bound fields loosely; the schema has checked them.
    const input = body as V4SwapAsk;
    const q = await quoteSwap(ctx, input);
    checkPriceImpact(input, q.impactBps);
    const bounds = swapBounds(input, q.quoted, await ctx.now());
    const limitField = sideOf(input) === 'exact_in' ? 'amount_out_minimum' : 'amount_in_maximum';
    if (bounds.limit > MAX_UINT128) throw new ProtocolError('invalid_amount', `${limitField} is larger than the router takes (a uint128)`, { field: limitField });
    const calls = swapCalls(
      { universalRouter: getAddress(ctx.config.universalRouter), permit2: getAddress(ctx.config.permit2) },
      { route: q.route, side: q.side, exact: q.exact, limit: bounds.limit },
      bounds.deadline,
    );
    // Native ETH included: the simulation reads it through its lens (TokenInfo.native).
    return { calls, tokens: [q.route.tokenIn, q.route.tokenOut], bounds: boundsRecord(input, bounds) };
  },
});
