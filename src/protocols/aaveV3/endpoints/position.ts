import { z } from 'zod';
import { ChainOut } from '../../../api/http/index.ts';
import { agentQueryFields } from '../../common/inputs.ts';
import { defineRead } from '../define.ts';
import { accountOf, accountReads, PositionSchema, positionOf } from '../position.ts';
import { loadReserves } from '../reserves.ts';

export const position = defineRead({
  path: 'position',
  summary: "The agent's Aave v3 position: collateral, debt, borrow capacity, health factor, liquidation prices",
  description:
    "The agent's account in the Pool: total collateral and debt in USD, what it can still borrow (in USD and in each borrowable " +
    'token), its LTV and liquidation threshold, health factor (liquidatable below 1), what it supplied and borrowed per token, and ' +
    'per collateral the price at which it would be liquidated.',
  query: z.object(agentQueryFields('ethereum')),
  output: z.object({ agent_id: z.string(), chain: ChainOut, wallet: z.string(), position: PositionSchema }),
  agent: true,
  async run(ctx) {
    const reserves = await loadReserves(ctx.read, ctx.config);
    const account = accountOf(await ctx.read(accountReads(ctx.config, reserves, ctx.wallet)));
    return { agent_id: ctx.agentId, chain: ctx.chain, wallet: ctx.wallet, position: positionOf(reserves, account) };
  },
});
