import { requestedAmount } from '../../common/amounts.ts';
import { callOf } from '../../common/calls.ts';
import { ProtocolError } from '../../common/errors.ts';
import { actionFields, withAmount } from '../../common/inputs.ts';
import { morphoAbi } from '../abi.ts';
import { actionState, marketField } from '../actionState.ts';
import { defineAction } from '../define.ts';
import { positionObservation } from '../position.ts';
import { formatted } from './common.ts';

export const withdraw = defineAction({
  path: 'withdraw',
  summary: 'Withdraw supplied loan token from a Morpho Blue market, part or all (max)',
  description:
    "Takes `amount` of the supplied loan token back to the agent's wallet, or `max`: all of it with interest (by shares, exactly). " +
    "The market must have that much not lent out (else the simulation refuses: INSUFFICIENT_LIQUIDITY).",
  input: withAmount({ ...actionFields('base'), ...marketField }, { max: true }),
  async plan(ctx, input) {
    const s = await actionState(ctx, input.market, 'loan');
    if (s.account.supplyShares === 0n) throw new ProtocolError('nothing_to_withdraw', `the agent supplies nothing to ${s.market.id}`, { field: 'amount' });
    const amount = requestedAmount(input, s.market.loan);
    if (amount.kind === 'exact' && amount.raw > s.supplied) {
      throw new ProtocolError('amount_above_supplied', `${formatted(amount.raw, s.market.loan)} is more than the ${formatted(s.supplied, s.market.loan)} supplied; withdraw max for all of it`, { field: 'amount' });
    }
    // max: every share, so nothing is left behind by rounding and the amount is fixed by the input, not by the clock.
    const [assets, shares] = amount.kind === 'exact' ? [amount.raw, 0n] : [0n, s.account.supplyShares];
    return {
      calls: [callOf({ address: s.morpho, abi: morphoAbi, functionName: 'withdraw', args: [s.market.params, assets, shares, ctx.wallet, ctx.wallet] })],
      tokens: [s.market.loan],
      position: positionObservation(s.morpho, s.market, ctx.wallet),
    };
  },
});
