import { z } from 'zod';
import { ChainOut } from '../../../api/http/index.ts';
import { AmountSchema, amountOf, TokenInfoSchema } from '../../common/amounts.ts';
import { agentQueryFields } from '../../common/inputs.ts';
import { balanceOfRead } from '../../common/tokens.ts';
import { CHAINS, defineRead } from '../define.ts';
import { loadPools } from '../pools.ts';
import { PositionSchema, walletPositionsDetailed } from '../positions.ts';

export const balances = defineRead({
  path: 'balances',
  summary: "The wallet: native ETH, pool tokens, positions",
  description:
    "What the agent's smart wallet holds of native ETH and of each token the listed pools trade (check it before a swap), and its " +
    'liquidity positions (token id, range, liquidity, amounts now, fees owed): what liquidity/remove takes.',
  query: z.object(agentQueryFields(CHAINS)),
  output: z.object({
    agent_id: z.string(),
    chain: ChainOut,
    wallet: z.string(),
    balances: z.array(z.object({ token: TokenInfoSchema, balance: AmountSchema })),
    positions: z.array(PositionSchema),
  }),
  agent: true,
  async run(ctx) {
    const set = await loadPools(ctx);
    const [held, native, positions] = await Promise.all([
      ctx.read(set.tokens.map((t) => balanceOfRead(t.address, ctx.wallet))),
      ctx.nativeBalance(),
      walletPositionsDetailed(ctx, ctx.wallet, set),
    ]);
    const eth = { ...set.weth, symbol: 'ETH', native: true };
    return {
      agent_id: ctx.agentId,
      chain: ctx.chain,
      wallet: ctx.wallet,
      balances: [{ token: eth, balance: amountOf(native, 18) }, ...set.tokens.map((t, i) => ({ token: t, balance: amountOf(held[i] as bigint, t.decimals) }))],
      positions: positions.positions.map((p) => p.position),
    };
  },
});
