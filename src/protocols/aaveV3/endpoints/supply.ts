import { requestedAmount } from '../../common/amounts.ts';
import { callOf, withApproval } from '../../common/calls.ts';
import { actionFields, TokenInput, withAmount } from '../../common/inputs.ts';
import { poolAbi } from '../abi.ts';
import { actionState, effectTokens } from '../actionState.ts';
import { defineAction } from '../define.ts';
import { positionObservation } from '../position.ts';
import { requireBalance } from './common.ts';

export const supply = defineAction({
  path: 'supply',
  summary: 'Supply a token to the Aave v3 Pool: it earns the supply rate and counts as collateral',
  description:
    "Moves `amount` of `token` from the agent's wallet into the Pool (the approval is in the same operation); the wallet receives " +
    'the aToken, whose balance grows with interest. A supplied token that can be collateral counts as collateral, so the agent can borrow against it.',
  input: withAmount({ ...actionFields('ethereum'), token: TokenInput }, { max: false }),
  async plan(ctx, input) {
    const s = await actionState(ctx, input.token);
    const amount = requestedAmount(input, s.reserve.token);
    if (amount.kind !== 'exact') throw new Error('unreachable: supply takes no max');
    requireBalance(s.walletBalance, amount.raw, s.reserve.token);
    return {
      calls: withApproval(s.reserve.token.address, s.pool, amount.raw, callOf({ address: s.pool, abi: poolAbi, functionName: 'supply', args: [s.reserve.token.address, amount.raw, ctx.wallet, 0] })),
      tokens: effectTokens(s, 'aToken'),
      position: positionObservation(ctx.config, s.reserves, ctx.wallet),
    };
  },
});
