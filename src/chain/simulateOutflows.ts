import { BaseError, decodeFunctionResult, encodeFunctionData, isAddressEqual, numberToHex, pad, type Address, type Hex } from 'viem';
import { err, ok, type Result } from '../lib/result.ts';
import type { ChainClient } from './client.ts';
import { LENS_RUNTIME, type SimulatedWallet } from './simulate.ts';
import { NATIVE_TRANSFER_EMITTERS, nativeNet, outflowsFromLogs, TRANSFER_TOPIC, type LogLike, type Outflow, type OutflowsUnavailable } from './outflows.ts';
import { decodeRevert, describeError } from './revert.ts';
import { lensNativeBalanceAbi, type SimulationFailure } from './types.ts';

/**
 * Where the balance probe (contracts/SimulationLens.sol's `nativeBalance`) is put by state override for the
 * one simulation: an address nothing lives at, so the EntryPoint keeps its own code and the calls see the chain as is.
 */
export const OUTFLOW_PROBE: Address = '0x00000000000000000000000000000000000a0f10';

export interface SimulateOutflowsParameters extends SimulatedWallet {
  /** The wallet's execute/executeBatch calldata (encodeWalletCallData). */
  callData: Hex;
  /** Calls in the batch: with one, every outflow is attributed to it. */
  callCount: number;
}

export type OutflowsAnswer = { outflows: Outflow[] } | { unavailable: OutflowsUnavailable };

/**
 * The outflows of the wallet running `callData` as handleOps would (from its EntryPoint; an undeployed wallet
 * gets the implementation's code, as in simulateCalls), from one `eth_simulateV1` with `traceTransfers`:
 * token transfers are the execution's own logs (a reverted frame's logs are gone, as on chain), native value
 * is the synthetic Transfer logs the node adds for every value transfer.
 *
 * Native value is checked, tokens are not: anvil 1.7.1 (revm's transfer inspector, also in reth) still reports
 * the synthetic log of a value transfer whose frame later reverted, where geth drops it. The same simulated
 * block reads the wallet's balance before and after the call, and the native logs must account for exactly
 * that change. When they do not, the native outflows come from `debug_traceCall` with the callTracer instead
 * (frames with an `error` are skipped with everything under them), which costs a second call only then and
 * is available on fewer public endpoints; eth_simulateV1 stays the one method a chain must have.
 * A chain without a method it needs is `unavailable` (rpc_unsupported), never "no outflows".
 *
 * @example
 * const r = await simulateOutflows(client, { entryPoint, sender, deployed, implementationCode, callData, callCount: 2 });
 * // r.value: { outflows: [{ kind: 'erc20', token: usdc, to: pool, amount: 5_000_000n }] }
 */
export async function simulateOutflows(client: ChainClient, p: SimulateOutflowsParameters): Promise<Result<OutflowsAnswer, SimulationFailure>> {
  let overrides: Record<Address, { code: Hex }>;
  try {
    overrides = p.deployed ? {} : { [p.sender]: { code: await p.implementationCode() } };
  } catch (e) {
    return err(rpcFailure(e));
  }
  const probe = { from: p.entryPoint, to: OUTFLOW_PROBE, data: encodeFunctionData({ abi: lensNativeBalanceAbi, functionName: 'nativeBalance', args: [p.sender] }) };
  const walletCall = { from: p.entryPoint, to: p.sender, data: p.callData };
  let block: SimulatedCall[];
  try {
    const r = (await client.request({
      method: 'eth_simulateV1',
      params: [
        {
          // `stateOverrides`, plural: anvil ignores the singular without a word.
          blockStateCalls: [{ stateOverrides: { ...overrides, [OUTFLOW_PROBE]: { code: LENS_RUNTIME } }, calls: [probe, walletCall, probe] }],
          traceTransfers: true,
          // No fee, nonce or balance checks: the EntryPoint (a contract) is the sender here, as in handleOps.
          validation: false,
        },
        'latest',
      ],
    } as never)) as { calls: SimulatedCall[] }[];
    block = r[0]?.calls ?? [];
  } catch (e) {
    if (isUnsupportedMethod(e)) return ok(unsupported(`the chain's RPC endpoint has no eth_simulateV1 (${describeError(e)})`));
    return err(rpcFailure(e));
  }
  const [before, run, after] = block;
  if (!before || !run || !after) return err({ code: 'rpc_unavailable', message: `eth_simulateV1 answered ${block.length} calls of 3` });
  if (before.status !== '0x1' || after.status !== '0x1') return err({ code: 'rpc_unavailable', message: 'eth_simulateV1 could not read the wallet balance (the probe call failed)' });
  if (run.status !== '0x1') {
    // simulateCalls saw it succeed: the state changed in between.
    const reason = decodeRevert(run.returnData ?? '0x').reason;
    return err({ code: 'simulation_reverted', message: `execution reverted: ${reason}`, revertReason: reason, revertData: run.returnData ?? '0x' });
  }
  const callIndex = p.callCount === 1 ? 0 : undefined;
  const outflows = outflowsFromLogs(p.sender, run.logs, callIndex);
  const balance = (c: SimulatedCall) => decodeFunctionResult({ abi: lensNativeBalanceAbi, functionName: 'nativeBalance', data: c.returnData });
  const { sent, received } = nativeNet(p.sender, run.logs, outflows);
  if (balance(before) - balance(after) === sent - received) return ok({ outflows });

  // The native logs claim more (or less) than the balance moved: take the native value from the call trace.
  let trace: CallFrame;
  try {
    trace = (await client.request({
      method: 'debug_traceCall',
      params: [walletCall, 'latest', { tracer: 'callTracer', tracerConfig: { withLog: true }, stateOverrides: overrides }],
    } as never)) as CallFrame;
  } catch (e) {
    if (isUnsupportedMethod(e)) {
      return ok(
        unsupported(
          `eth_simulateV1 reported native transfers the wallet's balance does not show (${sent - received} wei net against ${balance(before) - balance(after)}), ` +
            `and the chain's RPC endpoint has no debug_traceCall to settle it (${describeError(e)})`,
        ),
      );
    }
    return err(rpcFailure(e));
  }
  return ok({ outflows: outflowsFromTrace(p.sender, trace, p.callCount) });
}

interface SimulatedCall {
  status: Hex;
  returnData: Hex;
  logs: LogLike[];
}

/** geth's callTracer frame with `withLog`: `position` is how many of `calls` ran before the log. */
export interface CallFrame {
  type: string;
  from: Address;
  to?: Address;
  value?: Hex;
  error?: string;
  calls?: CallFrame[];
  logs?: (LogLike & { position?: Hex | number })[];
}

/** Frame types that move value to `to` (DELEGATECALL's value is the caller's own msg.value; CALLCODE keeps it). */
const VALUE_FRAMES = new Set(['CALL', 'CREATE', 'CREATE2', 'SELFDESTRUCT']);

/**
 * The outflows of a callTracer trace, in execution order: the logs of frames that did not revert, with a
 * synthetic native Transfer log (as eth_simulateV1 makes) for each value-moving frame. The top frame is the
 * wallet's execute/executeBatch (a deployed wallet's proxy delegates it to the implementation: one level
 * down), whose direct calls are the batch's calls, in order: each is attributed to its call.
 */
export function outflowsFromTrace(wallet: Address, top: CallFrame, callCount: number): Outflow[] {
  const out: Outflow[] = [];
  let batch = top;
  while (batch.calls?.length === 1 && batch.calls[0]!.type === 'DELEGATECALL') batch = batch.calls[0]!;
  const emit = (logs: LogLike[], callIndex: number | undefined) => out.push(...outflowsFromLogs(wallet, logs, callIndex));
  const walk = (frame: CallFrame, callIndex: number | undefined): void => {
    if (frame.error !== undefined) return; // reverted: nothing it or its sub-calls did remains
    const value = BigInt(frame.value ?? '0x0');
    if (value > 0n && VALUE_FRAMES.has(frame.type) && frame.to && isAddressEqual(frame.from, wallet)) {
      emit([{ address: NATIVE_TRANSFER_EMITTERS[0]!, topics: [TRANSFER_TOPIC, pad(frame.from), pad(frame.to)], data: numberToHex(value, { size: 32 }) }], callIndex);
    }
    const calls = frame.calls ?? [];
    const logsAt = (i: number) => (frame.logs ?? []).filter((l) => Number(l.position ?? 0) === i);
    for (let i = 0; i <= calls.length; i++) {
      emit(logsAt(i), callIndex);
      if (i < calls.length) walk(calls[i]!, frame === batch && calls.length === callCount ? i : callIndex);
    }
  };
  walk(top, callCount === 1 ? 0 : undefined);
  return out;
}

/**
 * Whether the node does not know the method: JSON-RPC -32601, or a message saying so (some providers answer
 * -32600/-32000 with "method ... not supported/available").
 */
export function isUnsupportedMethod(e: unknown): boolean {
  const matches = (x: unknown): boolean => {
    const { code, message, details } = (x ?? {}) as { code?: unknown; message?: unknown; details?: unknown };
    if (code === -32601) return true;
    const text = `${typeof message === 'string' ? message : ''} ${typeof details === 'string' ? details : ''}`;
    return /method .*(not found|not supported|does not exist|not available|is not whitelisted)|unsupported method/i.test(text);
  };
  if (e instanceof BaseError) return e.walk(matches) !== null;
  return matches(e);
}

const unsupported = (message: string): OutflowsAnswer => ({ unavailable: { code: 'rpc_unsupported', message } });

function rpcFailure(e: unknown): SimulationFailure {
  return { code: 'rpc_unavailable', message: `the chain did not answer: ${describeError(e)}` };
}
