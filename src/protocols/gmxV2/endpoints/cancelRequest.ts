import type { Hex } from 'viem';
import { z } from 'zod';
import { REQUIRED } from '../../../api/http/index.ts';
import type { TokenInfo } from '../../common/amounts.ts';
import { callOf } from '../../common/calls.ts';
import { ProtocolError } from '../../common/errors.ts';
import { actionFields } from '../../common/inputs.ts';
import { exchangeRouterAbi } from '../abis.generated.ts';
import type { GmxV2Config } from '../config.ts';
import { CHAINS, defineAction } from '../define.ts';
import { isWnt, nativeEth } from '../wnt.ts';
import { GM_DECIMALS } from '../liquidity.ts';
import { marketsNow } from '../markets.ts';
import { ownRequest } from '../ownRequest.ts';

const RequestKeyInput = z
  .string({ error: (iss) => (iss.input === undefined ? REQUIRED : 'must be a request key') })
  .regex(/^0x[0-9a-fA-F]{64}$/, 'must be a 0x-prefixed 32-byte key (GET orders lists requests, and status.order.key of the request that created it says it)')
  .meta({ description: "The deposit's or withdrawal's key: GET orders lists the wallet's pending requests, and status.order.key of the request that created it says it" });

export const cancelRequest = defineAction({
  path: 'requests/cancel',
  summary: 'Cancel a pending deposit or withdrawal',
  description:
    "Cancels a pending GMX v2 deposit or withdrawal of the wallet (GMX's cancelDeposit or cancelWithdrawal, chosen by the key): a " +
    "deposit's tokens or a withdrawal's GM tokens and the whole execution fee come back to the wallet. GMX allows it only once its " +
    'request expiration has passed since the request was made (before, its keeper is still due to act): refused with ' +
    'request_not_cancellable and when it becomes cancellable. The request that created it then reports it cancelled ' +
    '(status.order, reason USER_INITIATED_CANCEL, and its perp.deposit_cancelled or perp.withdrawal_cancelled event).',
  input: z.object({ ...actionFields(CHAINS), key: RequestKeyInput }),
  async plan(ctx, input) {
    const config = ctx.config as GmxV2Config;
    const [request, now, markets] = await Promise.all([ownRequest(ctx, input.key as Hex), ctx.now(), marketsNow(ctx)]);
    if (now < request.cancellableAt) {
      const at = new Date(Number(request.cancellableAt) * 1000).toISOString();
      throw new ProtocolError('request_not_cancellable', `GMX's keeper is still due to execute this ${request.kind}: its account may cancel it from ${at} (in ${request.cancellableAt - now} s)`, {
        field: 'key',
        details: { cancellable_at: at },
      });
    }
    const m = markets.markets.find((x) => x.address.toLowerCase() === request.market.toLowerCase());
    const back: TokenInfo[] = !m
      ? []
      : request.kind === 'withdrawal'
        ? [{ symbol: 'GM', address: m.address, decimals: GM_DECIMALS }]
        : [m.long, m.short].filter((t, i, all) => !isWnt(config, t) && all.findIndex((x) => x.address === t.address) === i);
    return {
      calls: [callOf({ address: config.exchangeRouter, abi: exchangeRouterAbi, functionName: request.kind === 'deposit' ? 'cancelDeposit' : 'cancelWithdrawal', args: [input.key as Hex] })],
      tokens: [nativeEth(config), ...back],
    };
  },
});
