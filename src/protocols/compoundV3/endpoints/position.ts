import { z } from 'zod';
import { ChainOut, queryParam } from '../../../api/http/index.ts';
import { agentQueryFields } from '../../common/inputs.ts';
import { defineRead } from '../define.ts';
import { CometMarketInput, loadMarkets, selectMarket } from '../markets.ts';
import { accountOf, accountReads, PositionSchema, positionOf } from '../position.ts';

export const position = defineRead({
  path: 'position',
  summary: "The agent's Compound v3 position: supplied, borrowed, collateral, health factor, liquidation prices",
  description:
    "The agent's position in each market (or in `market`): base supplied and borrowed with interest, collateral with USD values, " +
    'borrow capacity left, health factor (liquidatable below 1) and, per collateral, the price at which it would be liquidated.',
  query: z.object({ ...agentQueryFields('base'), market: queryParam(CometMarketInput) }),
  output: z.object({ agent_id: z.string(), chain: ChainOut, wallet: z.string(), positions: z.array(PositionSchema) }),
  agent: true,
  async run(ctx, q) {
    const all = await loadMarkets(ctx.read, ctx.config);
    const chosen = q.market === undefined ? all : [selectMarket(all, q.market)];
    const values = await ctx.read(chosen.flatMap((m) => accountReads(m, ctx.wallet)));
    let at = 0;
    const positions = chosen.map((m) => {
      const n = 2 + m.collaterals.length;
      const account = accountOf(values.slice(at, at + n));
      at += n;
      return positionOf(m, account);
    });
    return { agent_id: ctx.agentId, chain: ctx.chain, wallet: ctx.wallet, positions };
  },
});
