import type { Address } from 'viem';
import { z } from 'zod';
import type { TokenInfo } from '../../common/amounts.ts';
import { callOf } from '../../common/calls.ts';
import { ProtocolError } from '../../common/errors.ts';
import { actionFields } from '../../common/inputs.ts';
import { readOf } from '../../common/reads.ts';
import { dataStoreAbi, exchangeRouterAbi } from '../abis.generated.ts';
import type { GmxV2Config } from '../config.ts';
import { CHAINS, defineAction } from '../define.ts';
import { MarketRef } from '../inputs.ts';
import { claimableFundingAmountKey } from '../keys.ts';
import { findMarket, marketsNow } from '../markets.ts';

export const claims = defineAction({
  path: 'claims',
  summary: 'Claim earned funding fees',
  description:
    "Claims the funding fees GMX credited to the wallet (GMX's claimFundingFees; they are credited when a position changes: GET " +
    'balances lists them as claimable_funding), in every served market or in the one named, each in its own token, paid to the ' +
    'wallet. Nothing claimable is refused with nothing_to_claim.',
  input: z.object({
    ...actionFields(CHAINS),
    market: MarketRef.optional().meta({ description: 'Only this market (its address or index symbol); default every served market' }),
  }),
  async plan(ctx, input) {
    const config = ctx.config as GmxV2Config;
    const now = await marketsNow(ctx);
    const markets = input.market === undefined ? now.markets : [findMarket(now.markets, input.market)];
    const pairs = markets.flatMap((m) => [m.long, m.short].filter((t, i, all) => all.findIndex((x) => x.address === t.address) === i).map((token) => ({ market: m.address, token })));
    const amounts = (await ctx.read(
      pairs.map((p) => readOf({ address: config.dataStore, abi: dataStoreAbi, functionName: 'getUint', args: [claimableFundingAmountKey(p.market, p.token.address, ctx.wallet)] })),
    )) as readonly bigint[];
    const claimable = pairs.filter((_, i) => amounts[i]! > 0n);
    if (claimable.length === 0) {
      throw new ProtocolError('nothing_to_claim', `the wallet has no funding fees to claim${input.market === undefined ? '' : ` in ${markets[0]!.name}`}`, input.market === undefined ? {} : { field: 'market' });
    }
    const tokens = new Map<Address, TokenInfo>(claimable.map((c) => [c.token.address, c.token]));
    return {
      calls: [
        callOf({
          address: config.exchangeRouter,
          abi: exchangeRouterAbi,
          functionName: 'claimFundingFees',
          args: [claimable.map((c) => c.market), claimable.map((c) => c.token.address), ctx.wallet],
        }),
      ],
      tokens: [...tokens.values()],
    };
  },
});
