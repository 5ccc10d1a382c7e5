import { amountOf, requestedAmount } from '../../common/amounts.ts';
import { callOf, withApproval } from '../../common/calls.ts';
import { ProtocolError } from '../../common/errors.ts';
import { actionFields, TokenInput, withAmount } from '../../common/inputs.ts';
import { cometAbi } from '../abi.ts';
import { actionState } from '../actionState.ts';
import { defineAction } from '../define.ts';
import { CometMarketInput } from '../markets.ts';
import { positionObservation } from '../position.ts';


export const supply = defineAction({
  path: 'supply',
  summary: 'Supply the base token (to earn interest) or a collateral token to a Compound v3 market',
  description:
    "Moves `amount` of `token` from the agent's wallet into the market: the base token (e.g. USDC) earns the supply rate; a " +
    'collateral token (e.g. WETH) lets the agent borrow the base token. The approval is in the same operation. Comet rule: supplying ' +
    'the base token while it has a borrow repays the borrow first.',
  input: withAmount({ ...actionFields('base'), market: CometMarketInput, token: TokenInput }, { max: false }),
  async plan(ctx, input) {
    const s = await actionState(ctx, input);
    const amount = requestedAmount(input, s.token);
    if (amount.kind !== 'exact') throw new Error('unreachable: supply takes no max');
    if (s.walletBalance < amount.raw) {
      throw new ProtocolError(
        'insufficient_balance',
        `the wallet holds ${amountOf(s.walletBalance, s.token.decimals).formatted} ${s.token.symbol}, less than ${amountOf(amount.raw, s.token.decimals).formatted}`,
        { field: 'amount' },
      );
    }
    return {
      calls: withApproval(s.token.address, s.market.comet, amount.raw, callOf({ address: s.market.comet, abi: cometAbi, functionName: 'supply', args: [s.token.address, amount.raw] })),
      tokens: [s.token],
      position: positionObservation(s.market, ctx.wallet),
    };
  },
});
