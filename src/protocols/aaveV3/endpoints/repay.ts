import { maxUint256 } from 'viem';
import { requestedAmount } from '../../common/amounts.ts';
import { callOf, withApproval } from '../../common/calls.ts';
import { ProtocolError } from '../../common/errors.ts';
import { actionFields, TokenInput, withAmount } from '../../common/inputs.ts';
import { poolAbi, VARIABLE_RATE } from '../abi.ts';
import { actionState, effectTokens } from '../actionState.ts';
import { defineAction } from '../define.ts';
import { positionObservation } from '../position.ts';
import { formatted, requireBalance } from './common.ts';

export const repay = defineAction({
  path: 'repay',
  summary: 'Repay an Aave v3 variable-rate borrow, part or all (max)',
  description:
    "Repays `amount` of `token` from the agent's wallet, or `max`: the whole debt with interest to the second it executes (the " +
    'approval is in the same operation and taken back after). More than the debt is refused; the wallet must hold the amount.',
  input: withAmount({ ...actionFields('ethereum'), token: TokenInput }, { max: true }),
  async plan(ctx, input) {
    const s = await actionState(ctx, input.token);
    const t = s.reserve.token;
    const debt = s.user.variableDebt;
    if (debt === 0n) throw new ProtocolError('nothing_to_repay', `the agent owes no ${t.symbol} (variable rate)`, { field: 'token' });
    const amount = requestedAmount(input, t);
    if (amount.kind === 'exact' && amount.raw > debt) {
      throw new ProtocolError('amount_above_debt', `${formatted(amount.raw, t)} is more than the debt of ${formatted(debt, t)}; repay max to clear it`, { field: 'amount' });
    }
    requireBalance(s.walletBalance, amount.kind === 'exact' ? amount.raw : debt, t);
    const repayCall = (raw: bigint) => callOf({ address: s.pool, abi: poolAbi, functionName: 'repay', args: [t.address, raw, VARIABLE_RATE, ctx.wallet] });
    return {
      // The Pool repays the whole debt, interest to the second, for type(uint256).max: the amount is known only at execution.
      calls: amount.kind === 'exact' ? withApproval(t.address, s.pool, amount.raw, repayCall(amount.raw)) : withApproval(t.address, s.pool, 'unbounded', repayCall(maxUint256)),
      tokens: effectTokens(s, 'debtToken'),
      position: positionObservation(ctx.config, s.reserves, ctx.wallet),
    };
  },
});
