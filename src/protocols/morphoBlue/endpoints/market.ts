import { z } from 'zod';
import { ChainOut, queryParam } from '../../../api/http/index.ts';
import { chainInput, MarketInput } from '../../common/inputs.ts';
import { defineRead } from '../define.ts';
import { loadMarkets, MarketSchema, presentMarket, selectMarket } from '../markets.ts';

export const market = defineRead({
  path: 'market',
  summary: 'One Morpho Blue market, by id or COLLATERAL/LOAN pair',
  description: 'One market (`market`: its id, or its pair such as WETH/USDC): the same figures as GET .../markets gives for each.',
  query: z.object({ market: queryParam(MarketInput), chain: queryParam(chainInput('base')) }),
  output: z.object({ chain: ChainOut, market: MarketSchema }),
  agent: false,
  async run(ctx, q) {
    return { chain: ctx.chain, market: presentMarket(selectMarket(await loadMarkets(ctx), q.market)) };
  },
});
