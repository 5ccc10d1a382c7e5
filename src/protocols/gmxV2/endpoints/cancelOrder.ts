import type { Hex } from 'viem';
import { z } from 'zod';
import { callOf } from '../../common/calls.ts';
import { actionFields } from '../../common/inputs.ts';
import { exchangeRouterAbi } from '../abis.generated.ts';
import type { GmxV2Config } from '../config.ts';
import { CHAINS, defineAction } from '../define.ts';
import { nativeEth } from '../wnt.ts';
import { OrderKeyInput, ownOrder } from '../ownOrder.ts';

export const cancelOrder = defineAction({
  path: 'orders/cancel',
  summary: 'Cancel a pending order: its collateral and execution fee come back',
  description:
    "Cancels a pending order of the wallet (GMX's cancelOrder): an increase's collateral and the whole execution fee come back to " +
    'the wallet. A limit order can be cancelled at any time; a market order only once GMX\'s request expiration has passed (before, ' +
    'its keeper is still due to act: refused with RequestNotYetCancellable). The request that created the order then reports it ' +
    'cancelled (status.order, reason USER_INITIATED_CANCEL, and its perp.order_cancelled event).',
  input: z.object({ ...actionFields(CHAINS), key: OrderKeyInput }),
  async plan(ctx, input) {
    const config = ctx.config as GmxV2Config;
    await ownOrder(ctx, input.key as Hex);
    return {
      calls: [callOf({ address: config.exchangeRouter, abi: exchangeRouterAbi, functionName: 'cancelOrder', args: [input.key as Hex] })],
      tokens: [nativeEth(config)],
    };
  },
});
