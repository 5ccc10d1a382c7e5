import { requestedAmount } from '../../common/amounts.ts';
import { callOf } from '../../common/calls.ts';
import { ProtocolError } from '../../common/errors.ts';
import { actionFields, withAmount } from '../../common/inputs.ts';
import { morphoAbi } from '../abi.ts';
import { actionState, marketField } from '../actionState.ts';
import { defineAction } from '../define.ts';
import { positionObservation } from '../position.ts';
import { formatted } from './common.ts';

export const withdrawCollateral = defineAction({
  path: 'withdraw-collateral',
  summary: 'Withdraw collateral from a Morpho Blue market, part or all (max)',
  description:
    "Takes `amount` of the collateral (or `max`: all of it) back to the agent's wallet. With a borrow open, only what keeps the " +
    'position within the LLTV: more is refused at simulation (INSUFFICIENT_COLLATERAL).',
  input: withAmount({ ...actionFields('base'), ...marketField }, { max: true }),
  async plan(ctx, input) {
    const s = await actionState(ctx, input.market, 'collateral');
    const held = s.account.collateral;
    if (held === 0n) throw new ProtocolError('nothing_to_withdraw', `the agent has no collateral in ${s.market.id}`, { field: 'amount' });
    const amount = requestedAmount(input, s.market.collateral);
    if (amount.kind === 'exact' && amount.raw > held) {
      throw new ProtocolError('amount_above_supplied', `${formatted(amount.raw, s.market.collateral)} is more than the ${formatted(held, s.market.collateral)} of collateral`, { field: 'amount' });
    }
    // Collateral earns nothing: its amount is what was supplied, so max is that amount.
    const raw = amount.kind === 'exact' ? amount.raw : held;
    return {
      calls: [callOf({ address: s.morpho, abi: morphoAbi, functionName: 'withdrawCollateral', args: [s.market.params, raw, ctx.wallet, ctx.wallet] })],
      tokens: [s.market.collateral],
      position: positionObservation(s.morpho, s.market, ctx.wallet),
    };
  },
});
