import { z } from 'zod';
import { ChainOut, queryParam } from '../../../api/http/index.ts';
import { ProtocolError } from '../../common/errors.ts';
import { chainInput } from '../../common/inputs.ts';
import { defineRead } from '../define.ts';
import { loadPools, poolStates, PoolStateSchema, presentPoolState } from '../pools.ts';
import { FeeInput, PoolInput, poolsNamed } from '../select.ts';
import { CHAINS } from './common.ts';

export const pool = defineRead({
  path: 'pool',
  summary: 'A pool: price, tick, liquidity',
  description:
    "One pool (`pool`: its id, or a pair such as ETH/USDC; `fee` where the pair has several) read through StateView: its key, " +
    '√P (Q64.96), tick, in-range liquidity, and the price of each currency in the other.',
  query: z.object({ pool: queryParam(PoolInput), fee: queryParam(FeeInput.optional()), chain: queryParam(chainInput(CHAINS)) }),
  output: z.object({ chain: ChainOut, pool: PoolStateSchema }),
  agent: false,
  async run(ctx, q) {
    const all = await loadPools(ctx);
    const named = poolsNamed(all.pools, all.tokens, q.pool, q.fee);
    if (named.length > 1) {
      throw new ProtocolError('unknown_pool', `${q.pool} names ${named.length} pools (fees ${named.map((p) => p.key.fee).join(', ')}): give fee or the pool id`, { field: 'fee' });
    }
    const [state] = await poolStates(ctx, named);
    return { chain: ctx.chain, pool: presentPoolState(state!) };
  },
});
