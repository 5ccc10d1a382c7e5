import type { ExecutionPhase, ExecutionRequest } from '../api/v1alpha1/index.ts';
import type { ChainWorker } from '../chain/types.ts';
import type { ChainName } from '../config/chains.ts';
import type { Logger } from '../lib/logger.ts';
import type { ExecutionInformer } from './executionInformer.ts';

/** What the store says happened on a chain, held against the chain itself. */
export type ChainHistory =
  | { history: 'consistent'; history_detail: null }
  /** No finished request of this chain to compare with yet. */
  | { history: 'unknown'; history_detail: null }
  | { history: 'mismatch'; history_detail: string };

/** The phases whose tx hash is a final inclusion. */
const INCLUDED: ReadonlySet<ExecutionPhase | undefined> = new Set(['Confirmed', 'Reverted']);

/** How many of the newest requests are looked through for the chain's latest inclusion. */
const SCAN = 1_000;

/** The newest finished request of `chain` whose inclusion the store recorded (tx hash and block). */
function latestInclusion(informer: ExecutionInformer, chain: ChainName): ExecutionRequest | undefined {
  return informer
    .recent(SCAN)
    .find((r) => r.spec.chain === chain && INCLUDED.has(r.status?.phase) && r.status?.txHash !== undefined && r.status.blockHash !== undefined);
}

/**
 * Whether a chain still holds what the store says happened on it: the newest finished request's transaction
 * must still be in the block it was confirmed in. It is not when the chain lost history the store kept — a
 * devnet reset to an earlier state, or a reorg deeper than the confirmation depth — and then the store says
 * `confirmed` about transactions that do not exist. That is reported, loudly (an error log line when it
 * starts, and /health `degraded`), never repaired silently: what to do with requests whose effects are gone
 * is an operator's decision.
 */
export function createChainHistoryCheck(informer: ExecutionInformer, log: Logger) {
  const reported = new Map<ChainName, string>();
  return async (chain: ChainName, worker: ChainWorker): Promise<ChainHistory> => {
    const req = latestInclusion(informer, chain);
    if (!req) return { history: 'unknown', history_detail: null };
    const s = req.status!;
    const receipt = await worker.getTransactionReceipt(s.txHash as `0x${string}`);
    let detail: string | undefined;
    if (!receipt) {
      detail = `transaction ${s.txHash} of ${req.metadata.name}, confirmed in block ${s.blockNumber}, is not on the chain: it lost history the store kept (a devnet reset or a reorg deeper than the confirmation depth)`;
    } else if (receipt.blockHash.toLowerCase() !== s.blockHash!.toLowerCase()) {
      detail = `transaction ${s.txHash} of ${req.metadata.name} was confirmed in block ${s.blockNumber} (${s.blockHash}) but is now in block ${receipt.blockNumber} (${receipt.blockHash}): a reorg deeper than the confirmation depth`;
    }
    if (detail === undefined) {
      if (reported.delete(chain)) log.info({ chain }, 'the chain matches the store again');
      return { history: 'consistent', history_detail: null };
    }
    if (reported.get(chain) !== detail) {
      reported.set(chain, detail);
      log.error({ chain, request: req.metadata.name, txHash: s.txHash }, `CHAIN HISTORY MISMATCH on ${chain}: ${detail}`);
    }
    return { history: 'mismatch', history_detail: detail };
  };
}
