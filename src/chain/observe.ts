import { decodeFunctionResult, encodeFunctionData, type Hex, type StateOverride } from 'viem';
import { err, ok, type Result } from '../lib/result.ts';
import { encodeWalletCallData, type WalletCall } from './calls.ts';
import type { ChainClient } from './client.ts';
import { decodeRevert, describeError, extractRevertData, isExecutionRevert } from './revert.ts';
import { LENS_RUNTIME, type SimulatedWallet } from './simulate.ts';
import { LENS_READ_TARGET, type Observed, type ReadCall, type ReadCallResult, type SimulationFailure } from './types.ts';

const lensAbi = [
  {
    type: 'function',
    name: 'observe',
    stateMutability: 'nonpayable',
    inputs: [
      { name: 'wallet', type: 'address' },
      { name: 'walletCall', type: 'bytes' },
      { name: 'reads', type: 'tuple[]', components: [{ name: 'target', type: 'address' }, { name: 'data', type: 'bytes' }] },
    ],
    outputs: [
      { name: 'before', type: 'tuple[]', components: [{ name: 'success', type: 'bool' }, { name: 'data', type: 'bytes' }] },
      { name: 'afterwards', type: 'tuple[]', components: [{ name: 'success', type: 'bool' }, { name: 'data', type: 'bytes' }] },
    ],
  },
] as const;

export interface ObserveCallsParameters extends SimulatedWallet {
  calls: readonly WalletCall[];
  reads: readonly ReadCall[];
}

/**
 * `reads` before and after the wallet runs `calls`, in one eth_call at one block: contracts/SimulationLens.sol
 * is put at the EntryPoint's address by state override (the wallet takes calls from its EntryPoint only), reads,
 * calls the wallet as handleOps would, and reads again. An undeployed wallet gets the account implementation's
 * code, as in simulateCalls. Nothing is sent; the chain is not changed.
 *
 * @example
 * const r = await observeCalls(client, { ...wallet, calls, reads: [{ to: usdc, data: balanceOfWallet }] });
 * // r.value.before[0], r.value.after[0]: the wallet's USDC before and after the calls
 */
export async function observeCalls(client: ChainClient, p: ObserveCallsParameters): Promise<Result<Observed, SimulationFailure>> {
  let stateOverride: StateOverride;
  try {
    stateOverride = [{ address: p.entryPoint, code: LENS_RUNTIME }, ...(p.deployed ? [] : [{ address: p.sender, code: await p.implementationCode() }])];
  } catch (e) {
    return err({ code: 'rpc_unavailable', message: `the chain did not answer: ${describeError(e)}` });
  }
  const data = encodeFunctionData({
    abi: lensAbi,
    functionName: 'observe',
    // A read for the lens itself (a native balance) is addressed to the EntryPoint, where the lens sits for this call.
    args: [p.sender, encodeWalletCallData(p.calls), p.reads.map((r) => ({ target: r.to === LENS_READ_TARGET ? p.entryPoint : r.to, data: r.data }))],
  });
  let returned: Hex;
  try {
    returned = (await client.call({ to: p.entryPoint, data, stateOverride })).data ?? '0x';
  } catch (e) {
    if (!isExecutionRevert(e)) return err({ code: 'rpc_unavailable', message: `the chain did not answer: ${describeError(e)}` });
    const revertData = extractRevertData(e) ?? '0x';
    const { reason } = decodeRevert(revertData);
    return err({ code: 'simulation_reverted', message: `execution reverted: ${reason}`, revertReason: reason, revertData });
  }
  const [before, afterwards] = decodeFunctionResult({ abi: lensAbi, functionName: 'observe', data: returned });
  const asResult = (o: { success: boolean; data: Hex }): ReadCallResult =>
    o.success ? { success: true, returnData: o.data } : { success: false, revertData: o.data, reason: decodeRevert(o.data).reason };
  return ok({ before: before.map(asResult), after: afterwards.map(asResult) });
}
