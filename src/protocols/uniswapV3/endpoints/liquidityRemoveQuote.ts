import { defineRead } from '../define.ts';
import { removeQuoteInput } from '../liquidity/inputs.ts';
import { presentRemoveQuote, quoteRemove, RemoveQuoteSchema } from '../liquidity/remove.ts';

export const liquidityRemoveQuote = defineRead({
  path: 'liquidity/remove/quote',
  method: 'POST',
  summary: 'Quote a remove: amounts and fees back',
  description:
    'What .../liquidity/remove would pay at the price now: the liquidity `percentage` of the position is, the tokens it pays back ' +
    '(rounded down, as the pool does), the fees owed (computed exactly from the pool’s fee growth) that the collect adds, and the ' +
    'minimums at slippage_bps. Only a position NFT the agent’s wallet holds (else 400 unknown_position).',
  query: removeQuoteInput(),
  output: RemoveQuoteSchema,
  agent: true,
  async run(ctx, body) {
    return presentRemoveQuote(ctx.chain, await quoteRemove(ctx, body));
  },
});
