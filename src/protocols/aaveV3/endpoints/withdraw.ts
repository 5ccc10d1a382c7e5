import { maxUint256 } from 'viem';
import { requestedAmount } from '../../common/amounts.ts';
import { callOf } from '../../common/calls.ts';
import { ProtocolError } from '../../common/errors.ts';
import { actionFields, TokenInput, withAmount } from '../../common/inputs.ts';
import { poolAbi } from '../abi.ts';
import { actionState, effectTokens } from '../actionState.ts';
import { defineAction } from '../define.ts';
import { positionObservation } from '../position.ts';
import { formatted } from './common.ts';

export const withdraw = defineAction({
  path: 'withdraw',
  summary: 'Withdraw a supplied token from the Aave v3 Pool, part or all (max)',
  description:
    "Takes `amount` of the supplied `token` back to the agent's wallet, or `max`: all of it with interest to the second. With debt " +
    'open, only what keeps the health factor above 1: the simulation refuses more with Aave\'s reason (e.g. HEALTH_FACTOR_LOWER_THAN_LIQUIDATION_THRESHOLD).',
  input: withAmount({ ...actionFields('ethereum'), token: TokenInput }, { max: true }),
  async plan(ctx, input) {
    const s = await actionState(ctx, input.token);
    const t = s.reserve.token;
    if (s.user.supplied === 0n) throw new ProtocolError('nothing_to_withdraw', `the agent has no ${t.symbol} supplied`, { field: 'token' });
    const amount = requestedAmount(input, t);
    if (amount.kind === 'exact' && amount.raw > s.user.supplied) {
      throw new ProtocolError('amount_above_supplied', `${formatted(amount.raw, t)} is more than the ${formatted(s.user.supplied, t)} supplied; withdraw max for all of it`, { field: 'amount' });
    }
    return {
      // The Pool withdraws the whole balance, interest to the second, for type(uint256).max.
      calls: [callOf({ address: s.pool, abi: poolAbi, functionName: 'withdraw', args: [t.address, amount.kind === 'exact' ? amount.raw : maxUint256, ctx.wallet] })],
      tokens: effectTokens(s, 'aToken'),
      position: positionObservation(ctx.config, s.reserves, ctx.wallet),
    };
  },
});
