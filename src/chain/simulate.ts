import type { Address, Hex, StateOverride } from 'viem';
import simulationLensArtifact from './artifacts/SimulationLens.json' with { type: 'json' };
import type { Result } from '../lib/result.ts';
import { err, ok } from '../lib/result.ts';
import { encodeWalletCallData, totalValue, type WalletCall } from './calls.ts';
import type { ChainClient } from './client.ts';
import { callGasLimitFromEstimate, walletFrameGas } from './gas.ts';
import { decodeRevert, describeError, extractRevertData, isExecutionRevert } from './revert.ts';
import type { SimulationFailure } from './types.ts';

/** The wallet a simulation runs, as handleOps would: from its EntryPoint, with the implementation's code if undeployed. */
export interface SimulatedWallet {
  entryPoint: Address;
  sender: Address;
  /** Whether the wallet has code. If not, the SimpleAccount implementation's runtime code is put there. */
  deployed: boolean;
  /** Runtime code of the factory's accountImplementation(); needed only when the wallet is not deployed. */
  implementationCode: () => Promise<Hex>;
}

/** contracts/SimulationLens.sol's runtime code, put in place by state override where a simulation reads around the calls. */
export const LENS_RUNTIME = simulationLensArtifact.deployedBytecode as Hex;

export interface SimulateCallsParameters extends SimulatedWallet {
  calls: readonly WalletCall[];
}

export interface CallsSimulation {
  callData: Hex;
  /** eth_estimateGas of the wallet call, as sent by the EntryPoint (includes the 21000 + calldata intrinsic). */
  estimate: bigint;
  /** Gas of the wallet frame alone: the estimate minus the intrinsic 21000 + calldata, no margin. */
  walletGas: bigint;
  /** The callGasLimit the worker would sign: the wallet frame's gas with margins. */
  callGasLimit: bigint;
}

export type SimulateCallsReturnType = Result<CallsSimulation, SimulationFailure>;

/**
 * Runs the calls as the wallet would run them inside handleOps: an eth_call from the EntryPoint to the wallet
 * with its `execute`/`executeBatch` calldata, so a batch sees its own earlier effects and the targets see the
 * wallet as msg.sender. An undeployed wallet gets the implementation's code by state override (its
 * `_requireFromEntryPointOrOwner` passes: the EntryPoint is an immutable in that code). The gas comes from an
 * eth_estimateGas of the same call with the same override (anvil and geth support overrides there).
 *
 * @example
 * const r = await simulateCalls(client, { entryPoint, sender, deployed: false, implementationCode, calls });
 * if (!r.ok) console.log(r.error.revertReason); // 'Counter: forced failure'
 */
export async function simulateCalls(client: ChainClient, p: SimulateCallsParameters): Promise<SimulateCallsReturnType> {
  const callData = encodeWalletCallData(p.calls);
  let stateOverride: StateOverride | undefined;
  try {
    if (!p.deployed) stateOverride = [{ address: p.sender, code: await p.implementationCode() }];
  } catch (e) {
    return err(rpcFailure(e));
  }
  const request = { account: p.entryPoint, to: p.sender, data: callData, ...(stateOverride && { stateOverride }) };
  const [call, estimate] = await Promise.allSettled([client.call(request), client.estimateGas(request)]);

  if (call.status === 'rejected') {
    if (!isExecutionRevert(call.reason)) return err(rpcFailure(call.reason));
    return err(await revertFailure(client, p, request, call.reason));
  }
  if (estimate.status === 'rejected') {
    // The call succeeded but its estimate failed: an operational problem, or state that changed in between.
    return err(rpcFailure(estimate.reason));
  }
  return ok({
    callData,
    estimate: estimate.value,
    walletGas: walletFrameGas(estimate.value, callData),
    callGasLimit: callGasLimitFromEstimate(estimate.value, callData, !p.deployed),
  });
}

type CallRequest = { account: Address; to: Address; data: Hex; stateOverride?: StateOverride };

async function revertFailure(
  client: ChainClient,
  p: SimulateCallsParameters,
  request: CallRequest,
  error: unknown,
): Promise<SimulationFailure> {
  const data = extractRevertData(error) ?? '0x';
  const decoded = decodeRevert(data);
  let callIndex: number | undefined = p.calls.length === 1 ? 0 : undefined;
  if (callIndex === undefined) {
    try {
      callIndex = await findFailingCall(client, p, request);
    } catch {
      // the index is a nicety; the reason is what matters
    }
  }
  const where = callIndex === undefined ? '' : ` (call ${callIndex})`;

  // A value send beyond the balance fails inside the wallet with empty revert data.
  if (data === '0x') {
    const needed = totalValue(p.calls);
    if (needed > 0n) {
      try {
        const balance = await client.getBalance({ address: p.sender });
        if (balance < needed) {
          return {
            code: 'insufficient_funds',
            message: `the wallet holds ${balance} wei but the calls send ${needed} wei`,
            ...(callIndex !== undefined && { callIndex }),
            revertData: data,
          };
        }
      } catch (e) {
        return rpcFailure(e);
      }
    }
  }
  return {
    code: 'simulation_reverted',
    message: `execution reverted${where}: ${decoded.reason}`,
    ...(callIndex !== undefined && { callIndex }),
    revertReason: decoded.reason,
    revertData: data,
  };
}

/**
 * The index of the first failing call of a batch: a prefix of the batch reverts iff it contains the failing
 * call (execution is sequential and deterministic), so a binary search over prefix lengths finds it.
 */
async function findFailingCall(client: ChainClient, p: SimulateCallsParameters, request: CallRequest): Promise<number | undefined> {
  let lo = 1; // the shortest prefix length that might revert
  let hi = p.calls.length; // known to revert
  while (lo < hi) {
    const mid = (lo + hi) >> 1;
    const prefix = p.calls.slice(0, mid);
    const data = encodeWalletCallData(prefix); // a one-call prefix uses execute: same semantics
    try {
      await client.call({ ...request, data });
      lo = mid + 1;
    } catch (e) {
      if (!isExecutionRevert(e)) throw e;
      hi = mid;
    }
  }
  return lo - 1;
}

function rpcFailure(e: unknown): SimulationFailure {
  return { code: 'rpc_unavailable', message: `the chain did not answer: ${describeError(e)}` };
}
