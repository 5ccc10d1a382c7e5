import { isAddressEqual, type Hex } from 'viem';
import { ProtocolError } from '../common/errors.ts';
import { readOf } from '../common/reads.ts';
import { uintRead } from './marketParams.ts';
import type { AgentContext } from '../types.ts';
import { readerAbi } from './abis.generated.ts';
import type { GmxV2Config } from './config.ts';
import { REQUEST_EXPIRATION_TIME } from './keys.ts';

/** A pending deposit or withdrawal of the wallet, as the Reader has it, and when its account may cancel it. */
export type OwnRequest = {
  cancellableAt: bigint;
  market: `0x${string}`;
  executionFee: bigint;
} & ({ kind: 'deposit' } | { kind: 'withdrawal' });

/**
 * The wallet's pending deposit or withdrawal by key. One that is gone (executed or cancelled), never was, or is
 * another account's is 400 unknown_request: nobody may cancel what is not theirs (GMX checks the account on chain
 * too). GMX lets an account cancel only once REQUEST_EXPIRATION_TIME has passed since the request's last update
 * (its keeper is due to act before); cancellableAt says when.
 */
export async function ownRequest(ctx: AgentContext<'gmxV2'>, key: Hex): Promise<OwnRequest> {
  const config = ctx.config as GmxV2Config;
  const [deposit, withdrawal, expiration] = await ctx.read([
    readOf({ address: config.reader, abi: readerAbi, functionName: 'getDeposit', args: [config.dataStore, key] }),
    readOf({ address: config.reader, abi: readerAbi, functionName: 'getWithdrawal', args: [config.dataStore, key] }),
    uintRead(config.dataStore, REQUEST_EXPIRATION_TIME, 'REQUEST_EXPIRATION_TIME'),
  ] as const);
  if (isAddressEqual(deposit.addresses.account, ctx.wallet)) {
    return { kind: 'deposit', market: deposit.addresses.market, executionFee: deposit.numbers.executionFee, cancellableAt: deposit.numbers.updatedAtTime + expiration };
  }
  if (isAddressEqual(withdrawal.addresses.account, ctx.wallet)) {
    return { kind: 'withdrawal', market: withdrawal.addresses.market, executionFee: withdrawal.numbers.executionFee, cancellableAt: withdrawal.numbers.updatedAtTime + expiration };
  }
  throw new ProtocolError('unknown_request', `the wallet has no pending deposit or withdrawal ${key} (executed, cancelled, or not its own)`, { field: 'key' });
}
