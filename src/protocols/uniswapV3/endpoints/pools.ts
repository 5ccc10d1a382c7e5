import { z } from 'zod';
import { ChainOut, queryParam } from '../../../api/http/index.ts';
import { chainInput } from '../../common/inputs.ts';
import { SwapTokenInput } from '../../common/swap.ts';
import { CHAINS, defineRead } from '../define.ts';
import { loadPools, poolsOfPair, presentPool, PoolSchema, resolveSwapToken } from '../pools.ts';

export const pools = defineRead({
  path: 'pools',
  summary: 'The pools offered, with their prices',
  description:
    'Every pool this deployment lists (pair and fee tier), with its current price both ways, tick and in-range liquidity. ' +
    'token_a narrows it to the pools holding that token; with token_b too, to one pair.',
  query: z.object({
    token_a: queryParam(SwapTokenInput.optional()),
    token_b: queryParam(SwapTokenInput.optional()),
    chain: queryParam(chainInput(CHAINS)),
  }),
  output: z.object({ chain: ChainOut, pools: z.array(PoolSchema) }),
  agent: false,
  async run(ctx, q) {
    const set = await loadPools(ctx);
    const named = [q.token_a && resolveSwapToken(q.token_a, set, 'token_a'), q.token_b && resolveSwapToken(q.token_b, set, 'token_b')].filter((t) => !!t);
    const listed =
      named.length === 2
        ? poolsOfPair(set, named[0]!.address, named[1]!.address)
        : set.pools.filter((p) => named.every((t) => p.token0.address === t.address || p.token1.address === t.address));
    return { chain: ctx.chain, pools: listed.map(presentPool) };
  },
});
