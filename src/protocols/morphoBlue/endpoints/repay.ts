import { requestedAmount } from '../../common/amounts.ts';
import { callOf, withApproval } from '../../common/calls.ts';
import { ProtocolError } from '../../common/errors.ts';
import { actionFields, withAmount } from '../../common/inputs.ts';
import { morphoAbi } from '../abi.ts';
import { actionState, marketField } from '../actionState.ts';
import { defineAction } from '../define.ts';
import { positionObservation } from '../position.ts';
import { formatted, requireBalance } from './common.ts';

export const repay = defineAction({
  path: 'repay',
  summary: 'Repay a Morpho Blue borrow, part or all (max)',
  description:
    "Repays `amount` of the loan token from the agent's wallet, or `max`: the whole borrow, by shares, so not a unit of debt is " +
    'left (the approval is in the same operation and taken back after). Repaying more than the borrow is refused.',
  input: withAmount({ ...actionFields('base'), ...marketField }, { max: true }),
  async plan(ctx, input) {
    const s = await actionState(ctx, input.market, 'loan');
    const loan = s.market.loan;
    if (s.account.borrowShares === 0n) throw new ProtocolError('nothing_to_repay', `the agent has no borrow in ${s.market.id}`, { field: 'amount' });
    const amount = requestedAmount(input, loan);
    if (amount.kind === 'exact' && amount.raw > s.borrowed) {
      throw new ProtocolError('amount_above_debt', `${formatted(amount.raw, loan)} is more than the borrow of ${formatted(s.borrowed, loan)}; repay max to clear it`, { field: 'amount' });
    }
    requireBalance(s.walletBalance, amount.kind === 'exact' ? amount.raw : s.borrowed, loan);
    const repayCall = (assets: bigint, shares: bigint) => callOf({ address: s.morpho, abi: morphoAbi, functionName: 'repay', args: [s.market.params, assets, shares, ctx.wallet, '0x'] });
    return {
      // max repays every borrow share: the assets that takes are known only at execution, hence an approval without limit, taken back in the same operation.
      calls: amount.kind === 'exact' ? withApproval(loan.address, s.morpho, amount.raw, repayCall(amount.raw, 0n)) : withApproval(loan.address, s.morpho, 'unbounded', repayCall(0n, s.account.borrowShares)),
      tokens: [loan],
      position: positionObservation(s.morpho, s.market, ctx.wallet),
    };
  },
});
