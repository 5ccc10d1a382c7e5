import { requestedAmount } from '../../common/amounts.ts';
import { callOf, withApproval } from '../../common/calls.ts';
import { actionFields, withAmount } from '../../common/inputs.ts';
import { morphoAbi } from '../abi.ts';
import { actionState, marketField } from '../actionState.ts';
import { defineAction } from '../define.ts';
import { positionObservation } from '../position.ts';
import { requireBalance } from './common.ts';

export const supplyCollateral = defineAction({
  path: 'supply-collateral',
  summary: "Supply collateral to a Morpho Blue market, to borrow its loan token",
  description:
    "Moves `amount` of the market's collateral token (e.g. WETH) from the agent's wallet into its position (approval included). It earns " +
    'nothing; it lets the agent borrow up to collateral value × LLTV (see the simulation\'s position_after).',
  input: withAmount({ ...actionFields('base'), ...marketField }, { max: false }),
  async plan(ctx, input) {
    const s = await actionState(ctx, input.market, 'collateral');
    const amount = requestedAmount(input, s.market.collateral);
    if (amount.kind !== 'exact') throw new Error('unreachable: supply-collateral takes no max');
    requireBalance(s.walletBalance, amount.raw, s.market.collateral);
    return {
      calls: withApproval(
        s.market.collateral.address,
        s.morpho,
        amount.raw,
        callOf({ address: s.morpho, abi: morphoAbi, functionName: 'supplyCollateral', args: [s.market.params, amount.raw, ctx.wallet, '0x'] }),
      ),
      tokens: [s.market.collateral],
      position: positionObservation(s.morpho, s.market, ctx.wallet),
    };
  },
});
