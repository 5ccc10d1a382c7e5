import { z } from 'zod';
import { ChainOut } from '../../../api/http/index.ts';
import { AmountSchema, amountOf, TokenInfoSchema } from '../../common/amounts.ts';
import { agentQueryFields } from '../../common/inputs.ts';
import { balanceOfRead } from '../../common/tokens.ts';
import { defineRead } from '../define.ts';
import { accountOf, accountReads } from '../position.ts';
import { aprOf, loadReserves } from '../reserves.ts';

export const balances = defineRead({
  path: 'balances',
  summary: "Per Aave v3 reserve: the agent's wallet balance, what it supplied, what it owes, and the rates",
  description:
    "For every reserve of the Pool (USDC, WETH, …): what the agent's wallet holds, what it has supplied (its aToken balance, with " +
    'interest), what it owes (variable debt, with interest), whether the supply counts as collateral, and the supply and borrow APR. ' +
    'Use it before supply (is there enough in the wallet?), withdraw or repay.',
  query: z.object(agentQueryFields('ethereum')),
  output: z.object({
    agent_id: z.string(),
    chain: ChainOut,
    wallet: z.string(),
    reserves: z.array(
      z.object({
        token: TokenInfoSchema,
        wallet: AmountSchema,
        supplied: AmountSchema,
        borrowed: AmountSchema,
        collateral: z.boolean(),
        supply_apr: z.string(),
        borrow_apr: z.string(),
      }),
    ),
  }),
  agent: true,
  async run(ctx) {
    const reserves = await loadReserves(ctx.read, ctx.config);
    const values = await ctx.read([...reserves.map((r) => balanceOfRead(r.token.address, ctx.wallet)), ...accountReads(ctx.config, reserves, ctx.wallet)]);
    const held = values.slice(0, reserves.length) as bigint[];
    const account = accountOf(values.slice(reserves.length));
    return {
      agent_id: ctx.agentId,
      chain: ctx.chain,
      wallet: ctx.wallet,
      reserves: reserves.map((r, i) => {
        const u = account.reserves[i]!;
        const a = (x: bigint) => amountOf(x, r.token.decimals);
        return { token: r.token, wallet: a(held[i]!), supplied: a(u.supplied), borrowed: a(u.variableDebt + u.stableDebt), collateral: u.collateral, supply_apr: aprOf(r.supplyRate), borrow_apr: aprOf(r.variableBorrowRate) };
      }),
    };
  },
});
