import { concatHex, decodeErrorResult, encodeAbiParameters, toFunctionSelector, type Address, type Hex } from 'viem';
import type { PackedUserOperation } from 'viem/account-abstraction';
import { entryPoint07Abi } from '../abi.ts';
import type { ChainClient } from '../client.ts';
import { decodeRevert, describeError, extractRevertData, isExecutionRevert } from '../revert.ts';

export type BundleSimulation =
  | { kind: 'ok' }
  /** The EntryPoint refused one operation (FailedOp / FailedOpWithRevert): drop it and retry the rest. */
  | { kind: 'failedOp'; opIndex: number; reason: string; inner?: { reason: string; data: Hex } }
  /** handleOps reverted for a reason that names no operation. */
  | { kind: 'reverted'; reason: string; data: Hex }
  /** The chain did not answer. */
  | { kind: 'rpc'; message: string };

const HANDLE_OPS = entryPoint07Abi.find((x) => x.type === 'function' && x.name === 'handleOps')!;
/** Computed once: viem's encodeFunctionData hashes the function's signature on every call. */
const HANDLE_OPS_SELECTOR = toFunctionSelector(HANDLE_OPS);

/** EntryPoint v0.7 `handleOps(ops, beneficiary)` calldata (equal to encodeFunctionData's: bundleSimulation.test.ts). */
export const encodeHandleOps = (ops: readonly PackedUserOperation[], beneficiary: Address): Hex =>
  concatHex([HANDLE_OPS_SELECTOR, encodeAbiParameters(HANDLE_OPS.inputs, [ops, beneficiary])]);

/**
 * eth_call of handleOps(ops, beneficiary) from the executor with the gas the transaction will carry: what the
 * EntryPoint would do with this bundle in the next block.
 */
export async function simulateBundle(
  client: ChainClient,
  p: { entryPoint: Address; from: Address; data: Hex; gas: bigint },
): Promise<BundleSimulation> {
  try {
    await client.call({ account: p.from, to: p.entryPoint, data: p.data, gas: p.gas });
    return { kind: 'ok' };
  } catch (e) {
    if (!isExecutionRevert(e)) return { kind: 'rpc', message: describeError(e) };
    const data = extractRevertData(e) ?? '0x';
    return classifyHandleOpsRevert(data);
  }
}

/** Decodes a handleOps revert into the operation it names, if any. */
export function classifyHandleOpsRevert(data: Hex): BundleSimulation {
  try {
    const decoded = decodeErrorResult({ abi: entryPoint07Abi, data });
    if (decoded.errorName === 'FailedOp') {
      const [opIndex, reason] = decoded.args;
      return { kind: 'failedOp', opIndex: Number(opIndex), reason };
    }
    if (decoded.errorName === 'FailedOpWithRevert') {
      const [opIndex, reason, inner] = decoded.args;
      return { kind: 'failedOp', opIndex: Number(opIndex), reason, inner: { reason: decodeRevert(inner).reason, data: inner } };
    }
  } catch {
    // not an EntryPoint error
  }
  return { kind: 'reverted', reason: decodeRevert(data, [entryPoint07Abi]).reason, data };
}
