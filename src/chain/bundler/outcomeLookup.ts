import { encodeEventTopics, type Address, type Hex, type Log } from 'viem';
import { entryPoint07Abi } from '../abi.ts';
import type { ChainClient } from '../client.ts';
import type { OperationOutcome } from '../types.ts';
import { readEntryPointNonce } from '../entryPointNonce.ts';
import { outcomesFromLogs } from './receipt.ts';

export interface LogScanOptions {
  /** How far back from the latest block to look for an operation's UserOperationEvent. */
  lookbackBlocks: bigint;
  /** Blocks per eth_getLogs request (public RPCs cap the range; anvil does not). */
  chunkBlocks: bigint;
}

export const DEFAULT_LOG_SCAN: LogScanOptions = { lookbackBlocks: 1_000_000n, chunkBlocks: 100_000n };

const topicOf = (eventName: 'UserOperationEvent' | 'UserOperationRevertReason' | 'PostOpRevertReason'): Hex =>
  encodeEventTopics({ abi: entryPoint07Abi, eventName })[0]!;
const EVENT_TOPICS = [topicOf('UserOperationEvent'), topicOf('UserOperationRevertReason'), topicOf('PostOpRevertReason')];

/**
 * The EntryPoint's logs about one userOpHash (its topic 1), scanning back from the latest block in chunks,
 * newest first, and stopping at the chunk that holds its UserOperationEvent.
 */
export async function findOperationLogs(
  client: ChainClient,
  entryPoint: Address,
  hash: Hex,
  scan: LogScanOptions = DEFAULT_LOG_SCAN,
): Promise<Log[]> {
  const latest = await client.getBlockNumber({ cacheTime: 0 });
  const floor = latest > scan.lookbackBlocks ? latest - scan.lookbackBlocks : 0n;
  for (let to = latest; to >= floor; ) {
    const from = to - scan.chunkBlocks + 1n > floor ? to - scan.chunkBlocks + 1n : floor;
    const logs = (await client.request({
      method: 'eth_getLogs',
      params: [{ address: entryPoint, topics: [EVENT_TOPICS, hash], fromBlock: `0x${from.toString(16)}`, toBlock: `0x${to.toString(16)}` }],
    })) as unknown as Log[];
    if (logs.length > 0) {
      return logs.map((l) => ({
        ...l,
        blockNumber: l.blockNumber === null ? null : BigInt(l.blockNumber),
        logIndex: l.logIndex === null ? null : Number(l.logIndex),
        transactionIndex: l.transactionIndex === null ? null : Number(l.transactionIndex),
      })) as Log[];
    }
    if (from === floor) break;
    to = from - 1n;
  }
  return [];
}

/**
 * Where an operation the bundler does not hold stands, from the chain alone: its UserOperationEvent →
 * `included`; else the wallet's EntryPoint nonce has passed it → `dropped` (another operation used the
 * nonce); else `unknown` (never sent, or lost: re-submitting the same signed operation is safe).
 */
export async function lookupOperationOnChain(
  client: ChainClient,
  p: { entryPoint: Address; hash: Hex; sender: Address; nonce: bigint; scan?: LogScanOptions },
): Promise<OperationOutcome> {
  const logs = await findOperationLogs(client, p.entryPoint, p.hash, p.scan);
  const included = outcomesFromLogs(logs, p.entryPoint).get(p.hash.toLowerCase());
  if (included) return included;
  const chainNonce = await readEntryPointNonce(client, p.entryPoint, p.sender);
  if (chainNonce > p.nonce) {
    // The log scan is bounded: re-check the newest blocks once more in case the operation landed meanwhile.
    const again = outcomesFromLogs(await findOperationLogs(client, p.entryPoint, p.hash, p.scan), p.entryPoint).get(p.hash.toLowerCase());
    if (again) return again;
    return { state: 'dropped', code: 'nonce_used', message: `nonce ${p.nonce} of ${p.sender} was used by another operation` };
  }
  return { state: 'unknown' };
}
