import { z } from 'zod';
import { ChainOut } from '../../../api/http/index.ts';
import { amountOf, AmountSchema, TokenInfoSchema } from '../../common/amounts.ts';
import { agentQueryFields } from '../../common/inputs.ts';
import { balanceOfRead } from '../../common/tokens.ts';
import { defineRead } from '../define.ts';
import { isNative, loadPools } from '../pools.ts';
import { CHAINS } from './common.ts';

export const balances = defineRead({
  path: 'balances',
  summary: "The wallet's pool-token balances",
  description:
    "The agent's smart wallet balance of every ERC-20 the offered pools hold (what it can swap). Native ETH is not read here " +
    '(protocol reads are contract calls): GET /wallet/balance gives it.',
  query: z.object(agentQueryFields(CHAINS)),
  output: z.object({ agent_id: z.string(), chain: ChainOut, wallet: z.string(), balances: z.array(z.object({ token: TokenInfoSchema, balance: AmountSchema })) }),
  agent: true,
  async run(ctx) {
    const { tokens } = await loadPools(ctx);
    const erc20s = tokens.filter((t) => !isNative(t));
    const held = await ctx.read(erc20s.map((t) => balanceOfRead(t.address, ctx.wallet)));
    return { agent_id: ctx.agentId, chain: ctx.chain, wallet: ctx.wallet, balances: erc20s.map((t, i) => ({ token: t, balance: amountOf(held[i]!, t.decimals) })) };
  },
});
