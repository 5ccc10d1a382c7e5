import { requestedAmount } from '../../common/amounts.ts';
import { callOf } from '../../common/calls.ts';
import { actionFields, withAmount } from '../../common/inputs.ts';
import { morphoAbi } from '../abi.ts';
import { actionState, marketField } from '../actionState.ts';
import { defineAction } from '../define.ts';
import { positionObservation } from '../position.ts';

export const borrow = defineAction({
  path: 'borrow',
  summary: "Borrow a Morpho Blue market's loan token against the collateral supplied",
  description:
    "Borrows `amount` of the loan token into the agent's wallet. At most collateral value × LLTV minus what is borrowed (GET " +
    '.../position: borrow_capacity), else INSUFFICIENT_COLLATERAL; and at most what the market has not lent (INSUFFICIENT_LIQUIDITY): ' +
    'the simulation refuses with the reason.',
  input: withAmount({ ...actionFields('base'), ...marketField }, { max: false }),
  async plan(ctx, input) {
    const s = await actionState(ctx, input.market, 'loan');
    const amount = requestedAmount(input, s.market.loan);
    if (amount.kind !== 'exact') throw new Error('unreachable: borrow takes no max');
    return {
      calls: [callOf({ address: s.morpho, abi: morphoAbi, functionName: 'borrow', args: [s.market.params, amount.raw, 0n, ctx.wallet, ctx.wallet] })],
      tokens: [s.market.loan],
      position: positionObservation(s.morpho, s.market, ctx.wallet),
    };
  },
});
