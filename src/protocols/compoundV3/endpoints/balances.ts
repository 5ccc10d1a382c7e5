import { z } from 'zod';
import { ChainOut, queryParam } from '../../../api/http/index.ts';
import { AmountSchema, amountOf, TokenInfoSchema } from '../../common/amounts.ts';
import { agentQueryFields } from '../../common/inputs.ts';
import { balanceOfRead } from '../../common/tokens.ts';
import { defineRead } from '../define.ts';
import { CometMarketInput, loadMarkets, marketTokens, selectMarket } from '../markets.ts';
import { accountOf, accountReads } from '../position.ts';

export const balances = defineRead({
  path: 'balances',
  summary: "The agent's wallet balances of the Compound v3 tokens, and what it has in the protocol",
  description:
    "For every token of the market(s) (the base token and each collateral): what the agent's wallet holds, and what it has " +
    'supplied to the protocol (base supply, or collateral). Use it before supply (is there enough in the wallet?) or withdraw.',
  query: z.object({ ...agentQueryFields('base'), market: queryParam(CometMarketInput) }),
  output: z.object({
    agent_id: z.string(),
    chain: ChainOut,
    wallet: z.string(),
    markets: z.array(z.object({ market: z.string(), tokens: z.array(z.object({ token: TokenInfoSchema, wallet: AmountSchema, in_protocol: AmountSchema })) })),
  }),
  agent: true,
  async run(ctx, q) {
    const all = await loadMarkets(ctx.read, ctx.config);
    const chosen = q.market === undefined ? all : [selectMarket(all, q.market)];
    const values = await ctx.read(chosen.flatMap((m) => [...marketTokens(m).map((t) => balanceOfRead(t.address, ctx.wallet)), ...accountReads(m, ctx.wallet)]));
    let at = 0;
    const markets = chosen.map((m) => {
      const tokens = marketTokens(m);
      const held = values.slice(at, at + tokens.length) as bigint[];
      const account = accountOf(values.slice(at + tokens.length, at + tokens.length + 2 + m.collaterals.length));
      at += tokens.length + 2 + m.collaterals.length;
      const inProtocol = [account.supplied, ...account.collateral];
      return {
        market: m.name,
        tokens: tokens.map((t, i) => ({ token: t, wallet: amountOf(held[i]!, t.decimals), in_protocol: amountOf(inProtocol[i]!, t.decimals) })),
      };
    });
    return { agent_id: ctx.agentId, chain: ctx.chain, wallet: ctx.wallet, markets };
  },
});
