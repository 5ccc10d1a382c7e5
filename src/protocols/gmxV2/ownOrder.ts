import { isAddressEqual, type Hex } from 'viem';
import { z } from 'zod';
import { REQUIRED } from '../../api/http/index.ts';
import { ProtocolError } from '../common/errors.ts';
import { readOf } from '../common/reads.ts';
import type { AgentContext } from '../types.ts';
import { readerAbi } from './abis.generated.ts';
import type { GmxV2Config } from './config.ts';

export const OrderKeyInput = z
  .string({ error: (iss) => (iss.input === undefined ? REQUIRED : 'must be an order key') })
  .regex(/^0x[0-9a-fA-F]{64}$/, "must be a 0x-prefixed 32-byte order key (GET orders, or status.order.key of the request that created it)")
  .meta({ description: "The order's key: GET orders lists the wallet's, and status.order.key of the request that created it says it" });

/**
 * A pending order of the wallet, by key, as the Reader has it. An order that is gone (executed or cancelled), never
 * was, or is another account's is 400 unknown_order: nobody may change or cancel an order that is not theirs (GMX
 * checks the account on chain too).
 */
export async function ownOrder(ctx: AgentContext<'gmxV2'>, key: Hex) {
  const config = ctx.config as GmxV2Config;
  const [order] = await ctx.read([readOf({ address: config.reader, abi: readerAbi, functionName: 'getOrder', args: [config.dataStore, key] })]);
  if (!isAddressEqual(order.addresses.account, ctx.wallet)) {
    throw new ProtocolError('unknown_order', `the wallet has no pending order ${key} (executed, cancelled, or not its own)`, { field: 'key' });
  }
  return order;
}
