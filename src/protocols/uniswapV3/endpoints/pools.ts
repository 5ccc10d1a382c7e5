import { z } from 'zod';
import { ChainOut, queryParam } from '../../../api/http/index.ts';
import { ProtocolError } from '../../common/errors.ts';
import { chainInput } from '../../common/inputs.ts';
import { SwapTokenInput } from '../../common/swap.ts';
import { CHAINS, defineRead } from '../define.ts';
import { loadPools, poolsOfPair, presentPool, PoolSchema, resolveSwapToken } from '../pools.ts';

export const pools = defineRead({
  path: 'pools',
  summary: 'The pools offered, with their prices',
  description:
    'Every pool this deployment lists (pair and fee tier), with its current price both ways, tick and in-range liquidity. ' +
    'token_a and token_b (both) narrow it to one pair.',
  query: z.object({
    token_a: queryParam(SwapTokenInput.optional()),
    token_b: queryParam(SwapTokenInput.optional()),
    chain: queryParam(chainInput(CHAINS)),
  }),
  output: z.object({ chain: ChainOut, pools: z.array(PoolSchema) }),
  agent: false,
  async run(ctx, q) {
    if ((q.token_a === undefined) !== (q.token_b === undefined)) {
      throw new ProtocolError('unknown_pool', 'give both token_a and token_b (one pair), or neither (every pool)', { field: q.token_a === undefined ? 'token_a' : 'token_b' });
    }
    const set = await loadPools(ctx);
    const listed = q.token_a !== undefined ? poolsOfPair(set, resolveSwapToken(q.token_a, set, 'token_a').address, resolveSwapToken(q.token_b!, set, 'token_b').address) : set.pools;
    return { chain: ctx.chain, pools: listed.map(presentPool) };
  },
});
