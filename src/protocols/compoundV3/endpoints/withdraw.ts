import { maxUint256 } from 'viem';
import { amountOf, requestedAmount } from '../../common/amounts.ts';
import { callOf } from '../../common/calls.ts';
import { ProtocolError } from '../../common/errors.ts';
import { actionFields, TokenInput, withAmount } from '../../common/inputs.ts';
import { cometAbi } from '../abi.ts';
import { actionState, isBase } from '../actionState.ts';
import { defineAction } from '../define.ts';
import { CometMarketInput } from '../markets.ts';
import { positionObservation } from '../position.ts';

export const withdraw = defineAction({
  path: 'withdraw',
  summary: 'Withdraw supplied base token or collateral from a Compound v3 market (never a borrow)',
  description:
    "Moves `amount` of `token` (or `max`: all of it) from the market back to the agent's wallet: supplied base token, or " +
    'collateral (only while any borrow stays collateralized; the simulation refuses otherwise with NotCollateralized). It never ' +
    'borrows: withdrawing more base token than is supplied is refused (use borrow).',
  input: withAmount({ ...actionFields('base'), market: CometMarketInput, token: TokenInput }, { max: true }),
  async plan(ctx, input) {
    const s = await actionState(ctx, input);
    const held = isBase(s) ? s.account.supplied : s.account.collateral[s.collateralIndex]!;
    if (held === 0n) throw new ProtocolError('nothing_to_withdraw', `the agent has no ${s.token.symbol} in ${s.market.name}`, { field: 'token' });
    const amount = requestedAmount(input, s.token);
    if (amount.kind === 'exact' && amount.raw > held) {
      throw new ProtocolError(
        'amount_above_supplied',
        `${amountOf(amount.raw, s.token.decimals).formatted} ${s.token.symbol} is more than the ${amountOf(held, s.token.decimals).formatted} in ${s.market.name}` +
          (isBase(s) ? ' (withdrawing past the supply would borrow: use borrow)' : ''),
        { field: 'amount' },
      );
    }
    // Comet withdraws the whole supplied base for type(uint256).max (interest to the second); collateral has no such
    // form, and its balance does not grow, so max is the balance read now.
    const raw = amount.kind === 'exact' ? amount.raw : isBase(s) ? maxUint256 : held;
    return {
      calls: [callOf({ address: s.market.comet, abi: cometAbi, functionName: 'withdraw', args: [s.token.address, raw] })],
      tokens: [s.token],
      position: positionObservation(s.market, ctx.wallet),
    };
  },
});
