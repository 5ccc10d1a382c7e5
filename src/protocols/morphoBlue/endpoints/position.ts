import { getAddress } from 'viem';
import { z } from 'zod';
import { ChainOut, queryParam } from '../../../api/http/index.ts';
import { agentQueryFields, MarketInput } from '../../common/inputs.ts';
import { defineRead } from '../define.ts';
import { loadMarkets, selectMarket } from '../markets.ts';
import { PositionSchema, positionOf, positionRead } from '../position.ts';

export const position = defineRead({
  path: 'position',
  summary: "The agent's Morpho Blue positions: supplied, borrowed, collateral, health factor, liquidation price",
  description:
    "The agent's position in each market where it has one (or in `market`): loan token supplied and borrowed with interest to " +
    'now, collateral and its value, max borrow (collateral value × LLTV) and what is left of it, LTV, health factor (liquidatable ' +
    'below 1) and the collateral price at which it would be liquidated.',
  query: z.object({ ...agentQueryFields('base'), market: queryParam(MarketInput.optional()) }),
  output: z.object({ agent_id: z.string(), chain: ChainOut, wallet: z.string(), positions: z.array(PositionSchema) }),
  agent: true,
  async run(ctx, q) {
    const morpho = getAddress(ctx.config.morpho);
    const all = await loadMarkets(ctx);
    const chosen = q.market === undefined ? all : [selectMarket(all, q.market)];
    const accounts = await ctx.read(chosen.map((m) => positionRead(morpho, m, ctx.wallet)));
    const positions = chosen
      .map((m, i) => ({ m, a: accounts[i]! }))
      .filter(({ a }) => q.market !== undefined || a.supplyShares > 0n || a.borrowShares > 0n || a.collateral > 0n)
      .map(({ m, a }) => positionOf(m, a));
    return { agent_id: ctx.agentId, chain: ctx.chain, wallet: ctx.wallet, positions };
  },
});
