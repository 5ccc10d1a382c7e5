import { z } from 'zod';
import { ChainOut, queryParam } from '../../../api/http/index.ts';
import { TokenInfoSchema } from '../../common/amounts.ts';
import { chainInput } from '../../common/inputs.ts';
import { defineRead } from '../define.ts';
import { loadPools, PoolSchema, presentPool } from '../pools.ts';
import { FeeInput, PoolInput, poolsNamed } from '../select.ts';
import { CHAINS } from './common.ts';

export const pools = defineRead({
  path: 'pools',
  summary: 'The pools and tokens',
  description:
    'Every v4 pool this deployment offers, by pool key: id, pair, currency0/currency1 (native ETH is 0x0), fee, tick spacing, hooks; ' +
    'and the tokens a swap may name. `pool` (a pair such as ETH/USDC) keeps that pair only, `fee` that fee tier. GET .../pool gives a pool\'s price.',
  query: z.object({ pool: queryParam(PoolInput.optional()), fee: queryParam(FeeInput.optional()), chain: queryParam(chainInput(CHAINS)) }),
  output: z.object({ chain: ChainOut, pools: z.array(PoolSchema), tokens: z.array(TokenInfoSchema).meta({ description: 'The tokens of these pools (ETH: native)' }) }),
  agent: false,
  async run(ctx, q) {
    const all = await loadPools(ctx);
    const chosen = q.pool === undefined ? all.pools.filter((p) => q.fee === undefined || p.key.fee === Number(q.fee)) : poolsNamed(all.pools, all.tokens, q.pool, q.fee);
    const held = new Set(chosen.flatMap((p) => [p.token0.address, p.token1.address]));
    return { chain: ctx.chain, pools: chosen.map(presentPool), tokens: all.tokens.filter((t) => held.has(t.address)) };
  },
});
