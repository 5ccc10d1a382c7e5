import { isAddress } from 'viem';
import { z } from 'zod';
import { ChainOut, queryParam } from '../../../api/http/index.ts';
import { ProtocolError } from '../../common/errors.ts';
import { chainInput } from '../../common/inputs.ts';
import { CHAINS, defineRead } from '../define.ts';
import { loadPools, poolsOfPair, presentPool, PoolSchema, resolveSwapToken } from '../pools.ts';
import { routeFields } from '../route.ts';

const PoolInput = z
  .string({ error: (iss) => (iss.input === undefined ? 'is required' : 'must be a pool address or a pair like WETH/USDC') })
  .regex(/^(?:0x[0-9a-fA-F]{40}|[A-Za-z0-9._-]{1,42}\/[A-Za-z0-9._-]{1,42})$/, 'must be a pool address or a pair like WETH/USDC')
  .meta({ description: 'The pool: its address, or its pair (e.g. WETH/USDC; with fee when the pair is offered at several)', examples: ['WETH/USDC'] });

export const pool = defineRead({
  path: 'pool',
  summary: 'One pool: prices both ways, tick, liquidity',
  description: 'One listed pool, by address or by pair (and fee tier, when the pair is offered at several): the same figures as GET .../pools.',
  query: z.object({
    pool: queryParam(PoolInput),
    // Query values are text: digits become a number, anything else stays text and fails as "not an integer".
    fee: queryParam(z.preprocess((v) => (typeof v === 'string' && /^[0-9]{1,7}$/.test(v) ? Number(v) : v), routeFields.fee)),
    chain: queryParam(chainInput(CHAINS)),
  }),
  output: z.object({ chain: ChainOut, pool: PoolSchema }),
  agent: false,
  async run(ctx, q) {
    const set = await loadPools(ctx);
    if (isAddress(q.pool, { strict: false })) {
      const found = set.pools.find((p) => p.address.toLowerCase() === q.pool.toLowerCase());
      if (!found) throw new ProtocolError('unknown_pool', `${q.pool} is not a pool offered here; GET .../pools lists them`, { field: 'pool' });
      return { chain: ctx.chain, pool: presentPool(found) };
    }
    const [a, b] = q.pool.split('/') as [string, string];
    const pair = poolsOfPair(set, resolveSwapToken(a, set, 'pool').address, resolveSwapToken(b, set, 'pool').address);
    const matching = q.fee === undefined ? pair : pair.filter((p) => p.fee === q.fee);
    if (matching.length === 0) throw new ProtocolError('unknown_pool', pair.length > 0 ? `${q.pool} is offered at fee ${pair.map((p) => p.fee).join(', ')} only` : `no ${q.pool} pool is offered here`, { field: pair.length > 0 ? 'fee' : 'pool' });
    if (matching.length > 1) throw new ProtocolError('unknown_pool', `${q.pool} is offered at fee ${matching.map((p) => p.fee).join(', ')}: give fee`, { field: 'fee' });
    return { chain: ctx.chain, pool: presentPool(matching[0]!) };
  },
});
