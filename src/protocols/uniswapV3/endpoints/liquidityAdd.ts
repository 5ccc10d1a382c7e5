import { defineAction } from '../define.ts';
import { planAdd } from '../liquidity/add.ts';
import { addInput } from '../liquidity/inputs.ts';

export const liquidityAdd = defineAction({
  path: 'liquidity/add',
  summary: 'Add liquidity: a new position in a range, or to one',
  description:
    'With `pool` (address, or TOKEN_A/TOKEN_B with `fee`): mints a position NFT to the wallet over [price_lower, price_upper] (in ' +
    'quote_token, default token1; snapped outwards to the tick spacing) or the full range. With `position`: increaseLiquidity on that ' +
    'NFT of the wallet. amount0/amount1 are the most offered (one side alone: the other is computed). The batch approves exactly what ' +
    'is offered, adds, and sets the approvals back to zero. amount0_min/amount1_min (from slippage_bps, default 50) and the deadline ' +
    '(default now + 600 s) are fixed at the first plan; past them the position manager reverts (PriceSlippageCheck, TransactionTooOld).',
  input: addInput(),
  async plan(ctx, input) {
    const { calls, tokens, position, bounds } = await planAdd(ctx, input);
    return { calls, tokens, position, bounds };
  },
});
