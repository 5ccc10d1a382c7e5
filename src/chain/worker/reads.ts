import { formatTransactionReceipt, getAddress, numberToHex, RpcRequestError, type Hex, type RpcTransactionReceipt } from 'viem';
import type { ChainClient } from '../client.ts';
import { ChainError, rethrowAsRpcUnavailable } from '../errors.ts';
import { decodeRevert, extractRevertData, isExecutionRevert } from '../revert.ts';
import { MAX_LOG_RANGE_BLOCKS, type ChainHead, type LogQuery, type LogsResult, type ReadCall, type ReadCallResult, type ReadOptions, type ReadResult, type TransactionReceiptInfo } from '../types.ts';

/** Most calls one read takes: a larger read is refused (`invalid_request`), not split silently. */
export const MAX_READ_CALLS = 256;

export interface ChainReads {
  getHead(): Promise<ChainHead>;
  read(calls: readonly ReadCall[], opts?: ReadOptions): Promise<ReadResult>;
  getTransactionReceipt(hash: Hex): Promise<TransactionReceiptInfo | undefined>;
  getLogs(query: LogQuery): Promise<LogsResult>;
  /**
   * The highest head any of these reads was answered with. The chain had a block there: a head found below it
   * later is a chain that rewound (a devnet reset), not a node that has yet to show a block it just mined.
   */
  highestHead(): bigint;
}

/**
 * The worker's generic reads: the head, batched eth_calls at one block, receipts with logs. Callers encode and
 * decode with their own ABIs, so protocol reads and payment checks need no new worker method. Requests made
 * together go out as one JSON-RPC batch (the client's transport, rpcTransport.ts).
 */
export function createChainReads(client: ChainClient, opts: { onRewind?: (from: bigint, to: bigint) => void } = {}): ChainReads {
  let highest = 0n;
  let last: bigint | undefined;
  const saw = (n: bigint): bigint => {
    if (n > highest) highest = n;
    // A head below the one read before it: the chain rewound (or a load-balanced node is behind: harmless to say).
    if (last !== undefined && n < last) opts.onRewind?.(last, n);
    last = n;
    return n;
  };
  const blockNumber = (): Promise<bigint> => client.request({ method: 'eth_blockNumber' }, { dedupe: false }).then(BigInt).then(saw);

  return {
    highestHead: () => highest,

    async getHead() {
      const block = await client.getBlock({ blockTag: 'latest' }).catch(rethrowAsRpcUnavailable);
      saw(block.number);
      return { blockNumber: block.number, blockHash: block.hash, timestamp: block.timestamp };
    },

    async read(calls, opts = {}) {
      if (calls.length > MAX_READ_CALLS) {
        throw new ChainError('invalid_request', `a read takes at most ${MAX_READ_CALLS} calls, got ${calls.length}`, {
          details: { maxCalls: MAX_READ_CALLS, calls: calls.length },
        });
      }
      const asked = opts.block ?? 'latest';
      if (typeof asked === 'bigint' && asked < 0n) throw new ChainError('invalid_request', `block ${asked} is negative`);
      // 'latest' is pinned to a number first: a batch at the 'latest' tag may straddle a block the node mines meanwhile.
      const block = asked === 'latest' ? await blockNumber().catch(rethrowAsRpcUnavailable) : asked;
      const tag = numberToHex(block);
      // With a pinned block the head travels in the same batch, to tell "beyond the head" from a failing call.
      const [head, ...answers] = await Promise.allSettled([
        asked === 'latest' ? Promise.resolve(block) : blockNumber(),
        ...calls.map((c) => client.request({ method: 'eth_call', params: [{ to: c.to, data: c.data }, tag] }, { dedupe: false })),
      ]);
      if (head!.status === 'rejected') rethrowAsRpcUnavailable(head!.reason);
      if (block > head!.value) {
        throw new ChainError('invalid_request', `block ${block} is beyond the chain's head ${head!.value}`, { details: { block: block.toString() } });
      }
      const results = answers.map((a): ReadCallResult => {
        if (a.status === 'fulfilled') return { success: true, returnData: a.value as Hex };
        const failure = callFailure(a.reason);
        if (!failure) rethrowAsRpcUnavailable(a.reason);
        return { success: false, ...failure };
      });
      return { blockNumber: block, results };
    },

    async getTransactionReceipt(hash) {
      // Receipt and head in one batch; the head is what the confirmations count from.
      const [raw, head] = await Promise.all([
        client.request({ method: 'eth_getTransactionReceipt', params: [hash] }, { dedupe: false }) as Promise<RpcTransactionReceipt | null>,
        blockNumber(),
      ]).catch(rethrowAsRpcUnavailable);
      if (!raw) return undefined;
      const r = formatTransactionReceipt(raw);
      // The block's time: a payment is judged by when the chain included it (a quote's window).
      const block = await client.getBlock({ blockHash: r.blockHash }).catch(rethrowAsRpcUnavailable);
      // The head may have been read a moment before the receipt's block was: the block itself counts once.
      const confirmations = (head > r.blockNumber ? head : r.blockNumber) - r.blockNumber + 1n;
      return {
        transactionHash: r.transactionHash,
        status: r.status,
        blockNumber: r.blockNumber,
        blockHash: r.blockHash,
        blockTimestamp: block.timestamp,
        from: getAddress(r.from),
        ...(r.to && { to: getAddress(r.to) }),
        logs: r.logs.map((l) => ({ address: getAddress(l.address), topics: [...l.topics], data: l.data, logIndex: l.logIndex })),
        confirmations,
      };
    },

    async getLogs(query) {
      if (query.topics.length > 4) throw new ChainError('invalid_request', `a log query takes at most 4 topics, not ${query.topics.length}`);
      const head = await blockNumber().catch(rethrowAsRpcUnavailable);
      const last = query.fromBlock + MAX_LOG_RANGE_BLOCKS - 1n;
      const toBlock = query.toBlock ?? (head < last ? head : last);
      if (query.fromBlock > toBlock + 1n || toBlock > head || toBlock > last) {
        throw new ChainError('invalid_request', `blocks ${query.fromBlock}..${toBlock} are not within the head ${head} and ${MAX_LOG_RANGE_BLOCKS} blocks`);
      }
      // Nothing mined since the last query: an empty answer that covers up to the head.
      if (query.fromBlock > toBlock) return { logs: [], toBlock };
      const raw = (await client
        .request(
          {
            method: 'eth_getLogs',
            params: [{ address: query.address, topics: query.topics.map((t) => (t === null ? null : typeof t === 'string' ? t : [...t])), fromBlock: numberToHex(query.fromBlock), toBlock: numberToHex(toBlock) }],
          },
          { dedupe: false },
        )
        .catch(rethrowAsRpcUnavailable)) as { address: Hex; topics: Hex[]; data: Hex; logIndex: Hex; blockNumber: Hex; blockHash: Hex; transactionHash: Hex }[];
      const logs = raw.map((l) => ({
        address: getAddress(l.address),
        topics: [...l.topics],
        data: l.data,
        logIndex: Number(l.logIndex),
        blockNumber: BigInt(l.blockNumber),
        blockHash: l.blockHash,
        transactionHash: l.transactionHash,
      }));
      return { logs, toBlock };
    },
  };
}

/**
 * The failure of one eth_call the node ran: a revert (JSON-RPC code 3 with its data) or a halt (invalid
 * opcode, out of gas: anvil and reth answer "EVM error …", geth the halt's name). Undefined for anything
 * else (a node that failed to answer), which fails the whole read as rpc_unavailable.
 */
function callFailure(e: unknown): { revertData: Hex; reason: string } | undefined {
  if (isExecutionRevert(e)) {
    const revertData = extractRevertData(e) ?? '0x';
    return { revertData, reason: decodeRevert(revertData).reason };
  }
  const halt = nodeMessage(e);
  if (halt !== undefined && EVM_HALT.test(halt)) return { revertData: '0x', reason: halt };
  return undefined;
}

const EVM_HALT = /EVM error|out of gas|invalid opcode|stack (?:underflow|overflow)|invalid jump|write protection|max code size/i;

/** The message the node answered with, from the RpcRequestError somewhere in viem's cause chain. */
function nodeMessage(error: unknown): string | undefined {
  let e: unknown = error;
  for (let depth = 0; e && depth < 12; depth++) {
    if (e instanceof RpcRequestError) return e.details || e.shortMessage;
    e = (e as { cause?: unknown }).cause;
  }
  return undefined;
}
