import type { Address, Hex } from 'viem';
import type { SignedUserOperation } from '../../api/v1alpha1/index.ts';
import type { Logger } from '../../lib/logger.ts';
import type { OperationBundler } from '../bundler/types.ts';
import { lookupOperationOnChain, type LogScanOptions } from '../bundler/outcomeLookup.ts';
import type { ChainClient } from '../client.ts';
import type { OperationOutcome } from '../types.ts';
import type { ChainReads } from './reads.ts';

type Included = Extract<OperationOutcome, { state: 'included' }>;

/**
 * A head still below an inclusion this long after it was learned is not a node answering late (anvil's
 * synchronous send, a load-balanced RPC a block behind): the chain rewound below it.
 */
const REWIND_EVIDENCE_MS = 10_000;

export interface OperationOutcomesDeps {
  client: ChainClient;
  bundler: OperationBundler;
  reads: ChainReads;
  entryPoint: Address;
  /** The chain's confirmation depth: an inclusion is final at this many confirmations. */
  requiredConfirmations: number;
  logScan?: LogScanOptions | undefined;
  log: Logger;
}

/**
 * Where an operation stands, as the worker answers `getOperationOutcome` and pushes outcomes: the bundler's
 * memory first, the chain otherwise. An inclusion is never taken on trust: the worker checks the receipt is
 * still in the block it was seen in and counts its confirmations from the head. A reorg that removed it makes
 * the bundler forget it, and the chain answers: included elsewhere, `unknown` (nothing used the nonce: the
 * caller re-sends the same signed operation) or `dropped` with `nonce_used` (another operation took it).
 */
export function createOperationOutcomes(d: OperationOutcomesDeps) {
  const withDepth = (o: OperationOutcome): OperationOutcome =>
    o.state === 'included' ? { ...o, requiredConfirmations: d.requiredConfirmations } : o;

  /**
   * The inclusion with its current confirmations, or undefined once the chain has another block at its height.
   * A receipt the node does not return yet is not a reorg: nodes answer a moment behind the block they mined
   * (anvil's synchronous send returns before the receipt is queryable; load-balanced RPCs lag), so only a
   * different block at that height, with a block built on it, proves the inclusion gone; so does a head below its
   * height once this worker's reads had seen a head at or past it, or once the inclusion is older than any lag
   * (REWIND_EVIDENCE_MS): the chain rewound (a devnet reset). Until then it stays, unconfirmed.
   */
  async function stillIncluded(o: Included, hash: Hex): Promise<Included | undefined> {
    const same = (h: string | null | undefined) => h?.toLowerCase() === o.blockHash.toLowerCase();
    const receipt = await d.reads.getTransactionReceipt(o.txHash);
    if (receipt && same(receipt.blockHash)) {
      return { ...o, confirmations: Number(receipt.confirmations), requiredConfirmations: d.requiredConfirmations };
    }
    if (receipt) return undefined; // in another block already
    // The tip is not evidence: a node may answer for it with a block still being built (anvil's synchronous send
    // returns before its block is committed). A different block at a height something was built on is.
    const height = BigInt(o.blockNumber);
    const seenBefore = d.reads.highestHead();
    const [head, block] = await Promise.all([d.reads.getHead(), d.client.getBlock({ blockNumber: height }).catch(() => undefined)]);
    if (head.blockNumber > height && block && !same(block.hash)) return undefined; // another block at its height: reorganised away
    const known = d.bundler.outcomeAgeMs(hash) ?? 0;
    if (head.blockNumber < height && (seenBefore >= height || known > REWIND_EVIDENCE_MS)) return undefined; // rewound below it: gone
    return { ...o, confirmations: 0, requiredConfirmations: d.requiredConfirmations }; // not visible yet: wait
  }

  async function outcomeOf(op: SignedUserOperation): Promise<OperationOutcome> {
    const hash = op.hash as Hex;
    const known = d.bundler.outcomeOf(hash);
    if (known && known.state !== 'included') return known;
    if (known) {
      const current = await stillIncluded(known, hash);
      if (current) return current;
      d.log.warn({ hash, txHash: known.txHash, blockNumber: known.blockNumber }, 'an inclusion is gone from the chain (reorg): looking the operation up again');
      d.bundler.forget(hash);
    }
    const found = await lookupOperationOnChain(d.client, {
      entryPoint: d.entryPoint,
      hash,
      sender: op.sender as Address,
      nonce: BigInt(op.nonce),
      ...(d.logScan && { scan: d.logScan }),
    });
    d.bundler.remember(hash, found);
    if (found.state !== 'included') return found;
    return (await stillIncluded(found, hash)) ?? withDepth(found);
  }

  return {
    outcomeOf,
    /** Stamps pushed outcomes with the chain's depth (the bundler counts none). */
    withDepth,
  };
}
