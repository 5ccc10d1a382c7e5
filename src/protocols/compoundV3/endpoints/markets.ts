import { z } from 'zod';
import { ChainOut } from '../../../api/http/index.ts';
import { defineRead } from '../define.ts';
import { loadMarkets, MarketSchema, presentMarket } from '../markets.ts';

export const markets = defineRead({
  path: 'markets',
  summary: 'Compound v3 markets: base token, collaterals with their factors, prices, rates, totals',
  description:
    'Every Comet market this deployment serves: its base token (the one lent and borrowed), the collaterals it takes with their ' +
    'borrow and liquidation factors and USD prices, utilization, supply and borrow APR, and totals. No agent needed.',
  query: z.object({}),
  output: z.object({ chain: ChainOut, markets: z.array(MarketSchema) }),
  agent: false,
  async run(ctx) {
    return { chain: ctx.chain, markets: (await loadMarkets(ctx.read, ctx.config)).map(presentMarket) };
  },
});
