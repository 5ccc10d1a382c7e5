import { z } from 'zod';
import { ChainOut } from '../../../api/http/index.ts';
import { defineRead } from '../define.ts';
import { loadMarkets, MarketSchema, presentMarket } from '../markets.ts';

export const markets = defineRead({
  path: 'markets',
  summary: 'Morpho Blue markets: loan and collateral tokens, LLTV, oracle price, totals, rates',
  description:
    'Every Morpho Blue market this deployment offers: its id and pair (COLLATERAL/LOAN), loan and collateral tokens, LLTV, the ' +
    "oracle's price of the collateral in loan tokens, totals and utilization with interest accrued to now, and the borrow and " +
    'supply APR. Use the id or the pair as `market` in the other endpoints. No agent needed.',
  query: z.object({}),
  output: z.object({ chain: ChainOut, markets: z.array(MarketSchema) }),
  agent: false,
  async run(ctx) {
    return { chain: ctx.chain, markets: (await loadMarkets(ctx)).map(presentMarket) };
  },
});
