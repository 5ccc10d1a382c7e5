import { z } from 'zod';
import { ChainOut, queryParam } from '../../../api/http/index.ts';
import { chainInput } from '../../common/inputs.ts';
import { CHAINS, defineRead } from '../define.ts';
import { MarketSchema, presentMarket } from '../present.ts';
import { snapshot } from '../snapshot.ts';

export const markets = defineRead({
  path: 'markets',
  summary: 'GMX v2 markets: tokens, prices, open interest, funding and borrowing rates, fees',
  description:
    "Every GMX v2 market this deployment serves: its index, long and short tokens, the oracle keeper's min and max index price now, " +
    'open interest per side, the funding rate each side pays or receives per hour at the current imbalance, the borrowing rate, the ' +
    'position fee, the minimum collateral and the highest leverage. No agent needed.',
  query: z.object({ chain: queryParam(chainInput(CHAINS)) }),
  output: z.object({ chain: ChainOut, markets: z.array(MarketSchema) }),
  agent: false,
  async run(ctx) {
    return { chain: ctx.chain, markets: (await snapshot(ctx)).perp.map(presentMarket) };
  },
});
