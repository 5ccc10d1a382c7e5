import { maxUint256 } from 'viem';
import { amountOf, requestedAmount } from '../../common/amounts.ts';
import { callOf, withApproval } from '../../common/calls.ts';
import { ProtocolError } from '../../common/errors.ts';
import { actionFields, withAmount } from '../../common/inputs.ts';
import { cometAbi } from '../abi.ts';
import { actionState } from '../actionState.ts';
import { defineAction } from '../define.ts';
import { CometMarketInput } from '../markets.ts';
import { positionObservation } from '../position.ts';

export const repay = defineAction({
  path: 'repay',
  summary: 'Repay a Compound v3 borrow, part or all (max)',
  description:
    "Repays `amount` of the market's base token from the agent's wallet, or `max`: the whole borrow with interest to the second " +
    'it executes (the approval is in the same operation and taken back after). Repaying more than the borrow is refused (it would ' +
    'become a supply); the wallet must hold the amount.',
  input: withAmount({ ...actionFields('base'), market: CometMarketInput }, { max: true }),
  async plan(ctx, input) {
    const s = await actionState(ctx, { market: input.market });
    const base = s.market.base;
    const debt = s.account.borrowed;
    if (debt === 0n) throw new ProtocolError('nothing_to_repay', `the agent has no borrow in ${s.market.name}`, { field: 'amount' });
    const amount = requestedAmount(input, base);
    const fmt = (x: bigint) => `${amountOf(x, base.decimals).formatted} ${base.symbol}`;
    if (amount.kind === 'exact' && amount.raw > debt) {
      throw new ProtocolError('amount_above_debt', `${fmt(amount.raw)} is more than the borrow of ${fmt(debt)}; repay max to clear it`, { field: 'amount' });
    }
    const needed = amount.kind === 'exact' ? amount.raw : debt;
    if (s.walletBalance < needed) throw new ProtocolError('insufficient_balance', `the wallet holds ${fmt(s.walletBalance)}, less than ${fmt(needed)}`, { field: 'amount' });
    const supply = (raw: bigint) => callOf({ address: s.market.comet, abi: cometAbi, functionName: 'supply', args: [base.address, raw] });
    return {
      // Comet repays the whole borrow, interest to the second, for a supply of type(uint256).max.
      calls: amount.kind === 'exact' ? withApproval(base.address, s.market.comet, amount.raw, supply(amount.raw)) : withApproval(base.address, s.market.comet, 'unbounded', supply(maxUint256)),
      tokens: [base],
      position: positionObservation(s.market, ctx.wallet),
    };
  },
});
