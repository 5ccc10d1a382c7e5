import { SwapQuoteSchema, swapQuoteInput } from '../../common/swap.ts';
import { defineRead } from '../define.ts';
import { presentQuote, quoteSwap, type V4SwapAsk } from '../quote.ts';
import { routeFields } from '../route.ts';
import { CHAINS } from './common.ts';

export const swapQuote = defineRead({
  path: 'swap/quote',
  method: 'POST',
  summary: 'Quote a swap',
  description:
    'What a swap would give (amount_in: exact input) or cost (amount_out: exact output) now, from V4Quoter; price and mid price, ' +
    'price impact, pools crossed, gas, and the min received / max paid at slippage_bps (default 50). ETH is native. `route` for multi-hop.',
  query: swapQuoteInput(CHAINS, routeFields),
  output: SwapQuoteSchema,
  agent: false,
  async run(ctx, body) {
    const ask = body as V4SwapAsk;
    return presentQuote(ctx.chain, await quoteSwap(ctx, ask), ask.slippage_bps);
  },
});
