import { SwapQuoteSchema, swapQuoteInput } from '../../common/swap.ts';
import { CHAINS, defineRead } from '../define.ts';
import { presentQuote, priceSwap } from '../quote.ts';
import { routeFields } from '../route.ts';

export const swapQuote = defineRead({
  path: 'swap/quote',
  method: 'POST',
  summary: 'Quote a swap: amount, price impact, route, gas',
  description:
    "Prices a swap through Uniswap's QuoterV2 (which runs it in an eth_call): exact input (amount_in) or exact output (amount_out), " +
    "one pool (fee, or the pair's best) or a route you name. Answers the amount, the price against the pools' mid price (price " +
    'impact, fees apart), the route, the gas, and the bound at the default slippage. No agent needed.',
  query: swapQuoteInput(CHAINS, routeFields),
  output: SwapQuoteSchema,
  agent: false,
  async run(ctx, body) {
    const priced = await priceSwap(ctx, body);
    return presentQuote(ctx, priced, body, await ctx.now());
  },
});
