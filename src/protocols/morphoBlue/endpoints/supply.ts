import { callOf, withApproval } from '../../common/calls.ts';
import { actionFields, withAmount } from '../../common/inputs.ts';
import { requestedAmount } from '../../common/amounts.ts';
import { morphoAbi } from '../abi.ts';
import { actionState, marketField } from '../actionState.ts';
import { defineAction } from '../define.ts';
import { positionObservation } from '../position.ts';
import { requireBalance } from './common.ts';

export const supply = defineAction({
  path: 'supply',
  summary: 'Supply the loan token to a Morpho Blue market (to earn interest)',
  description:
    "Lends `amount` of the market's loan token from the agent's wallet (the approval is in the same operation); it earns the " +
    "market's supply rate. Withdraw it with .../withdraw. To borrow, supply collateral instead (.../supply-collateral).",
  input: withAmount({ ...actionFields('base'), ...marketField }, { max: false }),
  async plan(ctx, input) {
    const s = await actionState(ctx, input.market, 'loan');
    const amount = requestedAmount(input, s.market.loan);
    if (amount.kind !== 'exact') throw new Error('unreachable: supply takes no max');
    requireBalance(s.walletBalance, amount.raw, s.market.loan);
    return {
      calls: withApproval(s.market.loan.address, s.morpho, amount.raw, callOf({ address: s.morpho, abi: morphoAbi, functionName: 'supply', args: [s.market.params, amount.raw, 0n, ctx.wallet, '0x'] })),
      tokens: [s.market.loan],
      position: positionObservation(s.morpho, s.market, ctx.wallet),
    };
  },
});
