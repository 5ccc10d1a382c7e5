import type { Address, Hex } from 'viem';
import type { Logger } from '../../lib/logger.ts';
import type { ChainClient } from '../client.ts';
import type { LogScanOptions } from './outcomeLookup.ts';
import type { SponsorshipWindow } from '../paymaster.ts';
import type { SignedUserOperation } from '../../api/v1alpha1/index.ts';
import type { OperationOutcome } from '../types.ts';
import type { UserOperation07 } from '../userOperation.ts';
import type { OutcomeListener } from './outcomes.ts';

/** An operation as a bundler names it when it gives it back (withdrawn) or settles it (nonces to release). */
export interface HeldOperation {
  hash: Hex;
  sender: Address;
  nonce: bigint;
}

export type WithdrawAnswer =
  /** Taken back: none of these was handed on or carried; their nonces are the caller's to give back (the one asked first). */
  | { state: 'withdrawn'; entries: HeldOperation[] }
  /** Handed on (a bundle transaction, or an outside bundler, has it): it finishes as it is. */
  | { state: 'sent' }
  /** Not held, its final outcome known. */
  | { state: 'settled'; outcome: OperationOutcome }
  /** Neither held nor settled here. */
  | { state: 'notHeld' };

/** What every bundler is built with. */
export interface BundlerBaseOptions {
  client: ChainClient;
  chain: string;
  entryPoint: Address;
  log: Logger;
  /** Called when an operation is given up for good, so its nonce can be reused. */
  onDropped?: (op: HeldOperation) => void;
  /** Called when an operation is included, so the allocator can forget it. */
  onIncluded?: (op: HeldOperation) => void;
  /** Outcomes kept in memory for getOperationOutcome; older ones are looked up on chain. */
  recentOutcomes?: number;
  logScan?: LogScanOptions;
  /** Unix seconds; tests can move it. */
  now?: () => number;
  /**
   * The validity window an operation's paymasterData carries, when its layout is known: the built-in
   * VerifyingPaymaster's (the default). An ERC-7677 service's layout is its own: then none is read, and the chain
   * (the EntryPoint's AA32) says when a sponsorship expired.
   */
  sponsorshipWindow?: (paymasterData: Hex | undefined) => SponsorshipWindow | undefined;
}

/** Counters every bundler keeps (benchmarks, diagnostics). */
export interface OperationBundlerStats {
  includedOps: number;
  droppedOps: number;
  withdrawnOps: number;
}

/**
 * What the chain worker asks of a bundler, whichever bundles: the built-in one (bundler.ts: handleOps from the
 * chain's executor keys) or an ERC-4337 bundler over JSON-RPC (rpc/rpcBundler.ts). Outcomes are pushed to
 * `onOutcome` listeners as they become final and kept for `outcomeOf` while recent; the chain answers for the
 * others (worker/outcomes.ts).
 */
export interface OperationBundler {
  readonly kind: 'builtin' | 'rpc';
  readonly stats: Readonly<OperationBundlerStats>;
  /** Takes a verified operation; idempotent by hash. Never waits on the network. */
  submit(signed: SignedUserOperation, op: UserOperation07): 'accepted' | 'duplicate';
  /** `pending` while held, the final outcome when recent, undefined when it does not know it. */
  outcomeOf(hash: Hex): OperationOutcome | undefined;
  outcomeAgeMs(hash: Hex): number | undefined;
  /** Forgets an inclusion the chain no longer bears out (reorg). */
  forget(hash: Hex): void;
  /** Remembers an outcome learned from the chain. */
  remember(hash: Hex, outcome: OperationOutcome): void;
  /** The chain rewound: nonces learned from it are read again. */
  resyncNonces(): void;
  /** The kill switch (WithdrawResult in ../types.ts); `evenIfNotHeld` once the caller checked the chain has not used the nonce. */
  withdraw(op: HeldOperation, opts?: { evenIfNotHeld?: boolean }): WithdrawAnswer;
  onOutcome(listener: OutcomeListener): () => void;
  close(): Promise<void>;
}
