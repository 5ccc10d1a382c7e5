import { z } from 'zod';
import { ChainOut } from '../../../api/http/index.ts';
import { AmountSchema, amountOf, TokenInfoSchema, type TokenInfo } from '../../common/amounts.ts';
import { agentQueryFields } from '../../common/inputs.ts';
import { readOf } from '../../common/reads.ts';
import { balanceOfRead } from '../../common/tokens.ts';
import { dataStoreAbi } from '../abis.generated.ts';
import type { GmxV2Config } from '../config.ts';
import { CHAINS, defineRead } from '../define.ts';
import { nativeEth } from '../wnt.ts';
import { claimableFundingAmountKey } from '../keys.ts';
import { marketsNow } from '../markets.ts';

export const balances = defineRead({
  path: 'balances',
  summary: 'The wallet: native ETH, collateral tokens, GM market tokens, claimable funding',
  description:
    "What the agent's smart wallet holds for GMX v2: native ETH (execution fees are paid in it), each collateral token of the served " +
    "markets, each market's GM liquidity token, and the funding fees it has earned and may claim, per market and token.",
  query: z.object(agentQueryFields(CHAINS)),
  output: z.object({
    agent_id: z.string(),
    chain: ChainOut,
    wallet: z.string(),
    balances: z.array(z.object({ token: TokenInfoSchema, balance: AmountSchema })),
    market_tokens: z.array(z.object({ market: z.string(), name: z.string(), balance: AmountSchema })),
    claimable_funding: z.array(z.object({ market: z.string(), token: TokenInfoSchema, amount: AmountSchema })),
  }),
  agent: true,
  async run(ctx) {
    const config = ctx.config as GmxV2Config;
    const now = await marketsNow(ctx);
    const tokens = new Map<string, TokenInfo>();
    for (const m of now.markets) for (const t of [m.long, m.short]) tokens.set(t.address.toLowerCase(), t);
    const list = [...tokens.values()];
    const claimable = now.markets.flatMap((m) => [m.long, m.short].map((t) => ({ market: m, token: t })));
    const [held, native] = await Promise.all([
      ctx.read([
        ...list.map((t) => balanceOfRead(t.address, ctx.wallet)),
        ...now.markets.map((m) => balanceOfRead(m.address, ctx.wallet)),
        ...claimable.map((c) => readOf({ address: config.dataStore, abi: dataStoreAbi, functionName: 'getUint', args: [claimableFundingAmountKey(c.market.address, c.token.address, ctx.wallet)] })),
      ]),
      ctx.nativeBalance(),
    ]);
    const values = held as readonly bigint[];
    const gm = values.slice(list.length, list.length + now.markets.length);
    const funding = values.slice(list.length + now.markets.length);
    return {
      agent_id: ctx.agentId,
      chain: ctx.chain,
      wallet: ctx.wallet,
      balances: [
        { token: nativeEth(config), balance: amountOf(native, 18) },
        ...list.map((t, i) => ({ token: t, balance: amountOf(values[i]!, t.decimals) })),
      ],
      // GM tokens have 18 decimals (GMX's MarketToken).
      market_tokens: now.markets.map((m, i) => ({ market: m.address, name: m.name, balance: amountOf(gm[i]!, 18) })),
      claimable_funding: claimable.flatMap((c, i) => (funding[i]! > 0n ? [{ market: c.market.address, token: c.token, amount: amountOf(funding[i]!, c.token.decimals) }] : [])),
    };
  },
});
