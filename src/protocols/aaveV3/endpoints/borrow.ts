import { requestedAmount } from '../../common/amounts.ts';
import { callOf } from '../../common/calls.ts';
import { actionFields, TokenInput, withAmount } from '../../common/inputs.ts';
import { poolAbi, VARIABLE_RATE } from '../abi.ts';
import { actionState, effectTokens } from '../actionState.ts';
import { defineAction } from '../define.ts';
import { positionObservation } from '../position.ts';

export const borrow = defineAction({
  path: 'borrow',
  summary: 'Borrow a token from the Aave v3 Pool at the variable rate, against the collateral supplied',
  description:
    "Borrows `amount` of `token` into the agent's wallet at the variable rate. At most what the collateral allows (GET .../position: " +
    'borrow_capacity), else the simulation refuses with Aave\'s reason, e.g. COLLATERAL_CANNOT_COVER_NEW_BORROW (36).',
  input: withAmount({ ...actionFields('ethereum'), token: TokenInput }, { max: false }),
  async plan(ctx, input) {
    const s = await actionState(ctx, input.token);
    const amount = requestedAmount(input, s.reserve.token);
    if (amount.kind !== 'exact') throw new Error('unreachable: borrow takes no max');
    return {
      calls: [callOf({ address: s.pool, abi: poolAbi, functionName: 'borrow', args: [s.reserve.token.address, amount.raw, VARIABLE_RATE, 0, ctx.wallet] })],
      tokens: effectTokens(s, 'debtToken'),
      position: positionObservation(ctx.config, s.reserves, ctx.wallet),
    };
  },
});
