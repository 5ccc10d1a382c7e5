import { amountOf, requestedAmount } from '../../common/amounts.ts';
import { callOf } from '../../common/calls.ts';
import { ProtocolError } from '../../common/errors.ts';
import { actionFields, withAmount } from '../../common/inputs.ts';
import { cometAbi } from '../abi.ts';
import { actionState } from '../actionState.ts';
import { defineAction } from '../define.ts';
import { CometMarketInput } from '../markets.ts';
import { positionObservation } from '../position.ts';

export const borrow = defineAction({
  path: 'borrow',
  summary: 'Borrow the base token of a Compound v3 market against the collateral supplied',
  description:
    "Borrows `amount` of the market's base token into the agent's wallet, against its collateral. At least the market's " +
    'base_borrow_min (else BorrowTooSmall) and at most its borrow capacity (GET .../borrow-capacity; else NotCollateralized): the ' +
    "simulation says which. Comet borrows only past the supplied base, so an agent with base supplied withdraws it first.",
  input: withAmount({ ...actionFields('base'), market: CometMarketInput }, { max: false }),
  async plan(ctx, input) {
    const s = await actionState(ctx, { market: input.market });
    if (s.account.supplied > 0n) {
      throw new ProtocolError(
        'conflicting_position',
        `the agent has ${amountOf(s.account.supplied, s.token.decimals).formatted} ${s.token.symbol} supplied to ${s.market.name}; Comet lends from it before it borrows: withdraw it first (POST .../withdraw, amount max)`,
        { field: 'amount' },
      );
    }
    const amount = requestedAmount(input, s.market.base);
    if (amount.kind !== 'exact') throw new Error('unreachable: borrow takes no max');
    return {
      calls: [callOf({ address: s.market.comet, abi: cometAbi, functionName: 'withdraw', args: [s.market.base.address, amount.raw] })],
      tokens: [s.market.base],
      position: positionObservation(s.market, ctx.wallet),
    };
  },
});
