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
  summary: "The wallet's balances",
  description:
    "The agent's smart wallet balance of every token the offered pools hold (what it can swap), native ETH included.",
  query: z.object(agentQueryFields(CHAINS)),
  output: z.object({ agent_id: z.string(), chain: ChainOut, wallet: z.string(), balances: z.array(z.object({ token: TokenInfoSchema, balance: AmountSchema })) }),
  agent: true,
  async run(ctx) {
    const { tokens } = await loadPools(ctx);
    const erc20s = tokens.filter((t) => !isNative(t));
    const [held, eth] = await Promise.all([ctx.read(erc20s.map((t) => balanceOfRead(t.address, ctx.wallet))), ctx.nativeBalance()]);
    const balance = (t: (typeof tokens)[number]) => (isNative(t) ? eth : held[erc20s.indexOf(t)]!);
    return { agent_id: ctx.agentId, chain: ctx.chain, wallet: ctx.wallet, balances: tokens.map((t) => ({ token: t, balance: amountOf(balance(t), t.decimals) })) };
  },
});
