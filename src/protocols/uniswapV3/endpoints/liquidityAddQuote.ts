import { defineRead } from '../define.ts';
import { AddQuoteSchema, presentAddQuote, quoteAdd } from '../liquidity/add.ts';
import { addQuoteInput } from '../liquidity/inputs.ts';

export const liquidityAddQuote = defineRead({
  path: 'liquidity/add/quote',
  method: 'POST',
  summary: 'Quote an add: range, liquidity, amounts',
  description:
    'What .../liquidity/add would do at the price now, with the same body: the range (price_lower/price_upper snapped outwards to the ' +
    "pool's tick spacing, or the full range), the liquidity the position manager would add, the amounts the pool would take (computed " +
    'with the pool’s own arithmetic, to the unit) and the minimums at slippage_bps. Give `pool` (a new position) or `position` (add to one).',
  query: addQuoteInput(),
  output: AddQuoteSchema,
  agent: true,
  async run(ctx, body) {
    return presentAddQuote(ctx.chain, await quoteAdd(ctx, body));
  },
});
