import { defineAction } from '../define.ts';
import { removeInput } from '../liquidity/inputs.ts';
import { planRemove } from '../liquidity/remove.ts';

export const liquidityRemove = defineAction({
  path: 'liquidity/remove',
  summary: 'Remove part of a position, collect its fees',
  description:
    'One call to the position manager’s multicall: decreaseLiquidity(percentage of the position, with amount0_min/amount1_min from ' +
    'slippage_bps and a deadline, fixed at the first plan) and collect (everything owed: the tokens removed and all fees, to the ' +
    'wallet). At 100% the NFT stays in the wallet, empty (never burned). Another wallet’s position is 400 unknown_position.',
  input: removeInput(),
  async plan(ctx, input) {
    const { calls, tokens, position, bounds } = await planRemove(ctx, input);
    return { calls, tokens, position, bounds };
  },
});
