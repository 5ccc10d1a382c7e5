import { z } from 'zod';
import { ChainOut, queryParam } from '../../../api/http/index.ts';
import { agentQueryFields } from '../../common/inputs.ts';
import { defineRead } from '../define.ts';
import { CometMarketInput, loadMarkets, selectMarket } from '../markets.ts';
import { accountOf, accountReads, PositionSchema, positionOf } from '../position.ts';

export const borrowCapacity = defineRead({
  path: 'borrow-capacity',
  summary: 'How much more of the base token the agent can borrow in a Compound v3 market',
  description:
    'The base token the agent can still borrow in `market` (default: the first): its collateral value × borrow factors, minus ' +
    'what it has borrowed, in base token units; with the health factor and borrowed amount. Borrow at most this (and at least the ' +
    "market's base_borrow_min).",
  query: z.object({ ...agentQueryFields('base'), market: queryParam(CometMarketInput) }),
  output: z.object({
    agent_id: z.string(),
    chain: ChainOut,
    wallet: z.string(),
    ...PositionSchema.pick({ market: true, base_token: true, borrow_capacity: true, borrowed: true, collateral_value_usd: true, health_factor: true }).shape,
  }),
  agent: true,
  async run(ctx, q) {
    const m = selectMarket(await loadMarkets(ctx.read, ctx.config), q.market);
    const p = positionOf(m, accountOf(await ctx.read(accountReads(m, ctx.wallet))));
    return {
      agent_id: ctx.agentId,
      chain: ctx.chain,
      wallet: ctx.wallet,
      market: p.market,
      base_token: p.base_token,
      borrow_capacity: p.borrow_capacity,
      borrowed: p.borrowed,
      collateral_value_usd: p.collateral_value_usd,
      health_factor: p.health_factor,
    };
  },
});
