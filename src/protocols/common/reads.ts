import {
  decodeFunctionResult,
  encodeFunctionData,
  type Abi,
  type Address,
  type ContractFunctionArgs,
  type ContractFunctionName,
  type ContractFunctionReturnType,
  type Hex,
} from 'viem';
import type { ChainWorker, ReadCall, ReadCallResult } from '../../chain/types.ts';
import { ProtocolError } from './errors.ts';

type ReadOnly = 'view' | 'pure';

/** One contract read: the eth_call to make and how to decode its answer. `label` names it in errors. */
export interface Read<T> {
  call: ReadCall;
  label: string;
  decode(data: Hex): T;
}

export type Decoded<R extends readonly Read<unknown>[]> = { -readonly [K in keyof R]: R[K] extends Read<infer T> ? T : never };

/**
 * A typed read of a view function, encoded and decoded with viem against `abi` (the worker only moves bytes).
 *
 * @example
 * const r = readOf({ address: comet, abi: cometAbi, functionName: 'borrowBalanceOf', args: [wallet] }); // Read<bigint>
 */
export function readOf<
  const abi extends Abi,
  fn extends ContractFunctionName<abi, ReadOnly>,
  const args extends ContractFunctionArgs<abi, ReadOnly, fn>,
>(p: { address: Address; abi: abi; functionName: fn; args?: args; label?: string }): Read<ContractFunctionReturnType<abi, ReadOnly, fn, args>> {
  const data = encodeFunctionData({ abi: p.abi, functionName: p.functionName, args: p.args } as never);
  return {
    call: { to: p.address, data },
    label: p.label ?? `${p.functionName} on ${p.address}`,
    decode: (returned) => decodeFunctionResult({ abi: p.abi, functionName: p.functionName, args: p.args, data: returned } as never) as never,
  };
}

/**
 * Decodes one answer of a batch; a failed call is a protocol_read_failed error naming the read, its revert data as
 * the `cause` (a quoter's revert says why it cannot quote).
 */
export function decodeResult<T>(read: Read<T>, result: ReadCallResult): T {
  if (!result.success) throw new ProtocolError('protocol_read_failed', `${read.label} failed: ${result.reason}`, { cause: { revertData: result.revertData } });
  try {
    return read.decode(result.returnData);
  } catch (e) {
    throw new ProtocolError('protocol_read_failed', `${read.label} answered something else than its ABI says: ${(e as Error).message.split('\n')[0]}`);
  }
}

export type Reader = <const R extends readonly Read<unknown>[]>(reads: R) => Promise<Decoded<R>>;

/**
 * Reads through the chain worker's batched `read` (one JSON-RPC batch at one pinned block, over gRPC in a
 * cluster): every read of one call to the reader runs at the same block, in one round trip. Callers group what
 * they need into as few calls as possible (no N+1: a list, then everything about its items in one batch).
 */
export function createReader(worker: Pick<ChainWorker, 'read'>): Reader {
  return (async (reads: readonly Read<unknown>[]) => {
    if (reads.length === 0) return [];
    const { results } = await worker.read(reads.map((r) => r.call));
    return reads.map((r, i) => decodeResult(r, results[i]!));
  }) as Reader;
}
