import type { ExecutionPhase, ExecutionRequest } from '../api/v1alpha1/index.ts';
import type { ExecutionArchive, InclusionMark } from '../archive/types.ts';
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

/** What is not where it was recorded, in words; undefined when the chain has it in the recorded block. */
async function mismatchOf(worker: ChainWorker, what: string, txHash: string, blockNumber: string, blockHash: string | undefined): Promise<string | undefined> {
  const receipt = await worker.getTransactionReceipt(txHash as `0x${string}`);
  if (!receipt) {
    return `transaction ${txHash} of ${what}, confirmed in block ${blockNumber}, is not on the chain: it lost history the store kept (a devnet reset or a reorg deeper than the confirmation depth)`;
  }
  if (blockHash !== undefined && receipt.blockHash.toLowerCase() !== blockHash.toLowerCase()) {
    return `transaction ${txHash} of ${what} was confirmed in block ${blockNumber} (${blockHash}) but is now in block ${receipt.blockNumber} (${receipt.blockHash}): a reorg deeper than the confirmation depth`;
  }
  return undefined;
}

/**
 * Whether a chain still holds what the service says happened on it: the newest finished request's transaction
 * must still be in the block it was confirmed in, and so must the newest inclusion archived (the archive's mark,
 * which stands for the requests retention has deleted). The first is repaired by the controller, which looks
 * finished inclusions up again and sends lost ones again (docs/api.md); until it has, and for as long as archived
 * requests claim inclusions the chain no longer has (a chain reset: their archived status is not corrected), it
 * is reported, loudly: an error log line when it starts, and /health `degraded`.
 */
export function createChainHistoryCheck(informer: ExecutionInformer, log: Logger, archive?: { store: ExecutionArchive; namespace: string }) {
  const reported = new Map<ChainName, string>();
  return async (chain: ChainName, worker: ChainWorker): Promise<ChainHistory> => {
    const req = latestInclusion(informer, chain);
    // An archive that does not answer (Redis down) says nothing about the chain: checked without it.
    const mark: InclusionMark | undefined = await archive?.store.inclusionMark(chain, archive.namespace).catch(() => undefined);
    if (!req && !mark) return { history: 'unknown', history_detail: null };
    let detail: string | undefined;
    if (req) {
      const s = req.status!;
      detail = await mismatchOf(worker, req.metadata.name, s.txHash!, s.blockNumber ?? '?', s.blockHash);
    }
    if (detail === undefined && mark) {
      const lost = await mismatchOf(worker, `archived request ${mark.request}`, mark.txHash, mark.blockNumber, mark.blockHash);
      if (lost !== undefined) {
        detail = `${lost}; requests archived on ${chain} up to it keep the status they were archived with, which this chain no longer bears out`;
      }
    }
    if (detail === undefined) {
      if (reported.delete(chain)) log.info({ chain }, 'the chain matches the store again');
      return { history: 'consistent', history_detail: null };
    }
    if (reported.get(chain) !== detail) {
      reported.set(chain, detail);
      log.error({ chain, request: req?.metadata.name, archived: mark?.request }, `CHAIN HISTORY MISMATCH on ${chain}: ${detail}`);
    }
    return { history: 'mismatch', history_detail: detail };
  };
}
