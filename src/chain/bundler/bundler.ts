import type { Address, Hex } from 'viem';
import type { SignedUserOperation } from '../../api/v1alpha1/index.ts';
import type { LockManager } from '../../locks/types.ts';
import { readEntryPointNonce } from '../entryPointNonce.ts';
import { readFees, type FeeSnapshot } from '../fees.ts';
import { bundledGasLimits, GAS, handleOpsGasLimit, type OperationGasLimits } from '../gas.ts';
import { parseSponsorshipWindow } from '../paymaster.ts';
import { describeError } from '../revert.ts';
import type { OperationOutcome } from '../types.ts';
import { packUserOperation, type UserOperation07 } from '../userOperation.ts';
import { encodeHandleOps, simulateBundle } from './bundleSimulation.ts';
import { ExecutorPool, type Executor, type SendResult } from './executors.ts';
import { Mempool, type PoolEntry } from './mempool.ts';
import { lookupOperationOnChain } from './outcomeLookup.ts';
import { RecentOutcomes, type OutcomeListener } from './outcomes.ts';
import { outcomesFromLogs } from './receipt.ts';
import type { BundlerBaseOptions, OperationBundler } from './types.ts';
import { recordBundleSent, submittedTrace } from './traces.ts';
import { epochMs } from '../../lib/tracing.ts';

export interface BundlerOptions extends BundlerBaseOptions {
  chainId: number;
  beneficiary: Address;
  executorKeys: readonly Hex[];
  maxOpsPerBundle: number;
  maxWaitMs: number;
  /**
   * While a bundle of this chain is in flight, a bundle that is not full waits for it to finish, but for no
   * longer than this after its oldest operation arrived: fewer, fuller bundles (less gas per operation, less
   * work per operation for the node and for us) at a bounded cost in latency. 0 sends at once.
   */
  maxBusyWaitMs?: number;
  syncSend: boolean;
  receiptPollMs: number;
  locks: LockManager;
  receiptTimeoutMs?: number;
  /** A bundle transaction that reverts on chain this many times drops its operations. */
  maxFailedSends?: number;
  /** Told of every bundle transaction sent, for metrics (src/metrics implements it); optional. */
  observer?: BundleObserver;
  /** The chain's L1 data fee is paid apart from gas (OP-stack): PVG's L1 part stays out of the bundle's gas limit. */
  l1DataFeeApartFromGas?: boolean;
}

/**
 * What became of a bundle transaction: mined and successful, mined but reverted, refused by the node (nothing
 * sent), or sent without a receipt in time (it may still land).
 */
export type BundleResult = 'included' | 'reverted' | 'refused' | 'timeout';

export interface BundleEvent {
  chain: string;
  /** Operations in the transaction. */
  operations: number;
  result: BundleResult;
  /** The receipt's gasUsed (included and reverted only). */
  gasUsed?: bigint;
}

/** Observes the bundles a bundler sends; free of any metrics library. Must not throw. */
export interface BundleObserver {
  bundleSent(e: BundleEvent): void;
}

/** `after - before` of two BundlerStats.bySize snapshots: the bundles sent in between, by size. */
export function bundlesSince(
  after: BundlerStats['bySize'],
  before: BundlerStats['bySize'],
): { size: number; bundles: number; gasUsed: bigint; deployments: number; wallets: number }[] {
  return Object.entries(after)
    .map(([size, a]) => ({
      size: Number(size),
      bundles: a.bundles - (before[Number(size)]?.bundles ?? 0),
      gasUsed: a.gasUsed - (before[Number(size)]?.gasUsed ?? 0n),
      deployments: (a.deployments ?? 0) - (before[Number(size)]?.deployments ?? 0),
      wallets: (a.wallets ?? 0) - (before[Number(size)]?.wallets ?? 0),
    }))
    .filter((b) => b.bundles > 0);
}

/** Figures about the bundles sent so far (for benchmarks and the report). */
export interface BundlerStats {
  bundles: number;
  includedOps: number;
  droppedOps: number;
  /** Operations withdrawn before any bundle transaction carried them (withdraw). */
  withdrawnOps: number;
  /** Sum of the bundle transactions' gasUsed. */
  bundleGasUsed: bigint;
  /**
   * Per bundle size (operations in the transaction): how many bundles, their gasUsed summed, and, summed over those
   * bundles, the operations that deploy their wallet (≈ +170k each) and the distinct wallets (a wallet's second
   * operation in a bundle costs ≈ 11k less than another wallet's: bench/gas.ts): what a gas per operation is made
   * of. Bounded by maxOpsPerBundle.
   */
  bySize: Record<number, { bundles: number; gasUsed: bigint; deployments?: number; wallets?: number }>;
}

interface SenderState {
  /** The EntryPoint's nonce of the sender, as last read or advanced by our own inclusions. */
  expected: bigint | undefined;
  checkedAt: number;
  /** One of its operations sits in a bundle in flight: its other operations wait (order guarantee). */
  busy: boolean;
}

const NONCE_RECHECK_MS = 1_000;
/**
 * Lease of an executor key's lock. The lock manager renews it while the bundle is in flight, however long the
 * receipt takes; the TTL only says how soon a crashed worker's executors are usable again.
 */
const EXECUTOR_LOCK_TTL_MS = 15_000;
const IDLE_TICK_MS = 1_000;
const MAX_KNOWN_SENDERS = 10_000;

/**
 * The built-in ERC-4337 bundler: a mempool keyed by userOpHash, and a loop that packs operations into
 * EntryPoint.handleOps bundles sent from a pool of executor keys, one bundle in flight per executor.
 *
 * Order: a sender's operations go in nonce order, only starting from its current EntryPoint nonce, and a
 * sender is never in two bundles in flight at once. Safety: before a bundle is sent it is simulated with
 * eth_call; an operation the EntryPoint refuses (FailedOp) is dropped and the rest retried. Nothing here can
 * execute an operation twice: the EntryPoint nonce refuses a second inclusion.
 */
export class Bundler implements OperationBundler {
  readonly kind = 'builtin' as const;
  readonly #o: BundlerOptions & Required<Pick<BundlerOptions, 'receiptTimeoutMs' | 'maxFailedSends' | 'now'>>;
  readonly #pool = new Mempool();
  readonly #senders = new Map<string, SenderState>();
  readonly #outcomes: RecentOutcomes;
  readonly #executors: ExecutorPool;
  readonly #running = new Set<Promise<void>>();
  readonly #stats: BundlerStats = { bundles: 0, includedOps: 0, droppedOps: 0, withdrawnOps: 0, bundleGasUsed: 0n, bySize: {} };
  #gasBudget: bigint = GAS.maxTransactionGas;
  #closed = false;
  #failureStreak = 0;
  /** Something changed (a submission, a finished bundle) since the loop last looked. */
  #dirty = true;
  #wakeLoop: (() => void) | undefined;
  #loop: Promise<void>;

  constructor(opts: BundlerOptions) {
    this.#o = {
      receiptTimeoutMs: 120_000,
      maxFailedSends: 3,
      now: () => Math.floor(Date.now() / 1000),
      ...opts,
    };
    this.#outcomes = new RecentOutcomes(opts.recentOutcomes ?? 10_000, (e) =>
      this.#o.log.error({ err: describeError(e) }, 'outcome listener threw'),
    );
    this.#executors = new ExecutorPool(opts.client, opts.chainId, opts.executorKeys);
    this.#loop = this.#run();
  }

  #wake(): void {
    this.#dirty = true;
    this.#wakeLoop?.();
  }

  #wakeTimer: NodeJS.Timeout | undefined;
  #wakeAt = Infinity;
  /** Wakes the loop in `ms` (the earliest of the pending requests wins). */
  #wakeAfter(ms: number): void {
    const at = Date.now() + ms;
    if (this.#wakeTimer !== undefined && this.#wakeAt <= at) return;
    clearTimeout(this.#wakeTimer);
    this.#wakeAt = at;
    this.#wakeTimer = setTimeout(() => {
      this.#wakeTimer = undefined;
      this.#wakeAt = Infinity;
      this.#wake();
    }, ms);
  }

  /** Whether to hold a non-full bundle back while another of this chain is in flight (maxBusyWaitMs). */
  #holdForFullerBundle(): boolean {
    const maxBusyWait = this.#o.maxBusyWaitMs ?? 0;
    if (maxBusyWait <= 0 || this.#executors.idle === this.#executors.executors.length) return false;
    let count = 0;
    let oldest = Infinity;
    for (const [, list] of this.#pool.senders()) {
      for (const e of this.#readyOf(list)) {
        count++;
        if (e.submittedAt < oldest) oldest = e.submittedAt;
      }
    }
    if (count >= this.#o.maxOpsPerBundle) return false;
    const left = oldest + maxBusyWait - Date.now();
    if (left <= 0) return false;
    this.#wakeAfter(left);
    return true;
  }

  get stats(): Readonly<BundlerStats> {
    return this.#stats;
  }

  /**
   * Takes a verified operation. Idempotent by hash: an operation held, or with a known final outcome, is not
   * added again. Throws `nonce_conflict` for a different operation with the sender and nonce of a held one.
   */
  submit(signed: SignedUserOperation, op: UserOperation07): 'accepted' | 'duplicate' {
    if (this.#closed) throw new Error('bundler is closed');
    const hash = signed.hash as Hex;
    if (this.#pool.get(hash) || this.#outcomes.get(hash)) return 'duplicate';
    const packed = packUserOperation(op);
    const limits: OperationGasLimits = {
      callGasLimit: op.callGasLimit,
      verificationGasLimit: op.verificationGasLimit,
      preVerificationGas: op.preVerificationGas,
      paymasterVerificationGasLimit: op.paymasterVerificationGasLimit ?? 0n,
      paymasterPostOpGasLimit: op.paymasterPostOpGasLimit ?? 0n,
    };
    const gas = bundledGasLimits(limits, packed, this.#o.l1DataFeeApartFromGas ?? false);
    const window = op.paymaster ? (this.#o.sponsorshipWindow ?? parseSponsorshipWindow)(op.paymasterData) : undefined;
    this.#pool.add({
      hash,
      sender: op.sender,
      nonce: op.nonce,
      signed,
      packed,
      gas,
      validUntil: window && window.validUntil !== 0 ? window.validUntil : Number.POSITIVE_INFINITY,
      inFlight: false,
      failedSends: 0,
      submittedAt: Date.now(),
      trace: submittedTrace(),
    });
    this.#wake();
    return 'accepted';
  }

  /** How long ago this bundler learned the final outcome of `hash`, or undefined when it does not hold one. */
  outcomeAgeMs(hash: Hex): number | undefined {
    return this.#outcomes.ageMs(hash);
  }

  /** `pending` while held, the final outcome when recent, undefined when this bundler does not know it. */
  outcomeOf(hash: Hex): OperationOutcome | undefined {
    return this.#outcomes.get(hash) ?? (this.#pool.get(hash) ? { state: 'pending' } : undefined);
  }

  /**
   * Forgets a final outcome the chain no longer bears out (its inclusion was reorganised away), and the nonces
   * learned from inclusions with it: the bundle transaction that carried it is gone too, so executors' and
   * wallets' nonces are read from the chain again before they are relied on.
   */
  forget(hash: Hex): void {
    this.#outcomes.forget(hash);
    this.resyncNonces();
  }

  /**
   * Reads executors' and wallets' nonces from the chain again before relying on them: the chain rewound (a devnet
   * reset), and what our own inclusions had advanced them to may be gone with the blocks.
   */
  resyncNonces(): void {
    this.#executors.resyncNonces();
    for (const st of this.#senders.values()) if (!st.busy) st.expected = undefined;
  }

  /**
   * Withdraws the operation `hash` (sender, nonce) when no bundle transaction has carried it, with every later
   * operation of its sender none has carried either (they could only wait behind its nonce); each is recorded as
   * dropped with code `withdrawn` (pushed to listeners; a re-submission is then a no-op). Synchronous, so atomic
   * with the loop: a bundle marks its entries `carried` in the same tick it hands its transaction to the node,
   * after it checked none was withdrawn, so an operation is either withdrawn or sent, never both.
   * - `withdrawn`: the entries withdrawn (their nonces are the caller's to give back), the one asked first;
   * - `sent`: a bundle transaction carried it: it finishes as it is;
   * - `settled`: not held, its final outcome known (a withdrawal asked again answers `withdrawn` from it);
   * - `notHeld`: neither held nor settled here; `evenIfNotHeld` (the caller checked the chain has not used its
   *   nonce) records it withdrawn and withdraws the sender's later operations all the same.
   */
  withdraw(
    op: { hash: Hex; sender: Address; nonce: bigint },
    opts: { evenIfNotHeld?: boolean } = {},
  ): { state: 'withdrawn'; entries: Pick<PoolEntry, 'hash' | 'sender' | 'nonce'>[] } | { state: 'sent' } | { state: 'settled'; outcome: OperationOutcome } | { state: 'notHeld' } {
    const held = this.#pool.get(op.hash);
    if (held?.carried) return { state: 'sent' };
    if (!held) {
      const outcome = this.#outcomes.get(op.hash);
      if (outcome) return { state: 'settled', outcome };
      if (opts.evenIfNotHeld !== true) return { state: 'notHeld' };
    }
    const later = this.#pool.ofSender(op.sender).filter((e) => e.nonce > op.nonce && !e.carried);
    const message = 'withdrawn from the bundler before any bundle transaction carried it';
    const entries: Pick<PoolEntry, 'hash' | 'sender' | 'nonce'>[] = [];
    for (const e of [...(held ? [held] : []), ...later]) {
      this.#pool.remove(e.hash);
      e.withdrawn = true;
      entries.push(e);
      this.#outcomes.record(e.hash, { state: 'dropped', code: 'withdrawn', message });
    }
    if (!held) {
      entries.unshift({ hash: op.hash, sender: op.sender, nonce: op.nonce });
      this.#outcomes.record(op.hash, { state: 'dropped', code: 'withdrawn', message });
    }
    this.#stats.withdrawnOps += entries.length;
    this.#o.log.info({ sender: op.sender, nonces: entries.map((e) => e.nonce.toString()) }, 'operations withdrawn');
    return { state: 'withdrawn', entries };
  }

  /** Remembers an outcome learned from the chain (getOperationOutcome of an operation it did not hold). */
  remember(hash: Hex, outcome: OperationOutcome): void {
    if (outcome.state === 'included' || outcome.state === 'dropped') this.#outcomes.remember(hash, outcome);
  }

  onOutcome(listener: OutcomeListener): () => void {
    return this.#outcomes.subscribe(listener);
  }

  /** Stops taking bundles and waits for the ones in flight to finish. */
  async close(): Promise<void> {
    this.#closed = true;
    clearTimeout(this.#wakeTimer);
    this.#wake();
    await this.#loop;
    await Promise.allSettled([...this.#running]);
  }

  // ── the loop ────────────────────────────────────────────────────────────────────────────────────────────

  async #run(): Promise<void> {
    try {
      const block = await this.#o.client.getBlock({ blockTag: 'latest' });
      this.#gasBudget = minBig(GAS.maxTransactionGas, (block.gasLimit * 9n) / 10n);
    } catch (e) {
      this.#o.log.warn({ err: describeError(e) }, 'bundler: could not read the block gas limit; using the EIP-7825 cap');
    }
    while (!this.#closed) {
      if (!this.#dirty) {
        await new Promise<void>((resolve) => {
          const timer = setTimeout(resolve, IDLE_TICK_MS);
          this.#wakeLoop = () => {
            clearTimeout(timer);
            resolve();
          };
        });
        this.#wakeLoop = undefined;
      }
      this.#dirty = false;
      if (this.#closed) break;
      try {
        await this.#round();
      } catch (e) {
        this.#o.log.error({ err: describeError(e) }, 'bundler round failed');
        await sleep(100);
      }
    }
  }

  /** Starts as many bundles as there are idle executors and ready operations. */
  async #round(): Promise<void> {
    this.#sweepExpired(this.#o.now());
    let waited = false;
    while (!this.#closed && this.#executors.idle > 0) {
      if (!this.#hasReady()) {
        await this.#refreshNonces();
        if (!this.#hasReady()) return;
      }
      // Let a burst arrive so it shares a bundle (config.bundler.maxWaitMs).
      if (!waited && this.#o.maxWaitMs > 0 && this.#readyCount() < this.#o.maxOpsPerBundle) {
        waited = true;
        await sleep(this.#o.maxWaitMs);
      }
      await this.#refreshNonces();
      if (this.#holdForFullerBundle()) return; // a finishing bundle or the timer wakes the loop again
      const entries = this.#select();
      if (entries.length === 0) return;
      const executor = this.#executors.take();
      if (!executor) {
        this.#release(entries);
        return;
      }
      const run = this.#runBundle(executor, entries)
        .then(() => {
          this.#failureStreak = 0;
        })
        .catch(async (e) => {
          // An unexpected error (a bug, a bad configuration): back off so it cannot spin.
          this.#failureStreak++;
          const backoff = Math.min(100 * 2 ** Math.min(this.#failureStreak, 6), 5_000);
          this.#o.log.error({ err: describeError(e), backoffMs: backoff }, 'bundle failed');
          await sleep(backoff);
        })
        .finally(() => {
          this.#release(entries);
          this.#executors.give(executor);
          this.#running.delete(run);
          this.#wake();
        });
      this.#running.add(run);
    }
  }

  #state(sender: Address): SenderState {
    const key = sender.toLowerCase();
    let s = this.#senders.get(key);
    if (!s) {
      s = { expected: undefined, checkedAt: 0, busy: false };
      this.#senders.set(key, s);
    }
    return s;
  }

  /** Operations that could go into a bundle now. */
  #readyOf(list: readonly PoolEntry[]): PoolEntry[] {
    const first = list[0];
    if (!first) return [];
    const st = this.#state(first.sender);
    if (st.busy || st.expected === undefined) return [];
    const out: PoolEntry[] = [];
    let next = st.expected;
    for (const e of list) {
      if (e.nonce < next) continue; // stale: settled by #refreshNonces
      if (e.inFlight || e.nonce !== next) break; // being looked up, or a gap: wait for the missing nonce
      out.push(e);
      next++;
    }
    return out;
  }

  #hasReady(): boolean {
    for (const [, list] of this.#pool.senders()) if (this.#readyOf(list).length > 0) return true;
    return false;
  }

  #readyCount(): number {
    let n = 0;
    for (const [, list] of this.#pool.senders()) n += this.#readyOf(list).length;
    return n;
  }

  /**
   * Reads the EntryPoint nonce of senders whose next operation does not follow the known nonce (first sight,
   * a gap, or our knowledge is stale), and settles operations whose nonce is already used.
   */
  async #refreshNonces(): Promise<void> {
    const now = Date.now();
    const todo: Address[] = [];
    for (const [sender, list] of this.#pool.senders()) {
      const st = this.#state(sender);
      if (st.busy) continue;
      const lowest = list.find((e) => !e.inFlight);
      if (!lowest) continue;
      // Our known nonce only moves up (chain reads, our own inclusions): below it means used, settle now.
      if (st.expected !== undefined && lowest.nonce < st.expected) {
        for (const e of [...list]) if (!e.inFlight && e.nonce < st.expected) this.#settleUsedNonce(e);
        continue;
      }
      if (st.expected === undefined || (lowest.nonce !== st.expected && now - st.checkedAt >= NONCE_RECHECK_MS)) todo.push(sender);
    }
    if (todo.length === 0) return;
    await Promise.all(
      todo.map(async (sender) => {
        const st = this.#state(sender);
        try {
          st.expected = await this.#chainNonce(sender);
          st.checkedAt = Date.now();
        } catch (e) {
          this.#o.log.warn({ sender, err: describeError(e) }, 'bundler: could not read a wallet nonce');
          return;
        }
        for (const e of [...this.#pool.ofSender(sender)]) {
          if (!e.inFlight && e.nonce < st.expected) this.#settleUsedNonce(e);
        }
      }),
    );
  }

  #chainNonce(sender: Address): Promise<bigint> {
    return readEntryPointNonce(this.#o.client, this.#o.entryPoint, sender);
  }

  /** Picks the next bundle: senders in arrival order, each one's ready run in nonce order, within limits. */
  #select(): PoolEntry[] {
    const picked: PoolEntry[] = [];
    const served: Address[] = [];
    let gas: OperationGasLimits[] = [];
    outer: for (const [sender, list] of this.#pool.senders()) {
      const ready = this.#readyOf(list);
      let took = 0;
      for (const e of ready) {
        if (picked.length >= this.#o.maxOpsPerBundle) break outer;
        const next = [...gas, e.gas];
        if (handleOpsGasLimit(next) > this.#gasBudget) {
          if (picked.length === 0) this.#finalize(e, { state: 'dropped', code: 'validation_failed', message: 'operation gas limits exceed a transaction' });
          break outer;
        }
        gas = next;
        picked.push(e);
        took++;
      }
      if (took > 0) served.push(sender);
    }
    for (const s of served) {
      this.#state(s).busy = true;
      this.#pool.rotate(s);
    }
    for (const e of picked) e.inFlight = true;
    return picked;
  }

  /** After a bundle: its senders may be bundled again; entries still held become selectable. */
  #release(entries: readonly PoolEntry[]): void {
    for (const e of entries) {
      e.inFlight = false;
      this.#state(e.sender).busy = false;
    }
    // Bound memory: past a size, forget idle senders (their nonce is re-read from the chain if they come back).
    if (this.#senders.size > MAX_KNOWN_SENDERS) {
      for (const [key, st] of this.#senders) {
        if (!st.busy && this.#pool.ofSender(key as Address).length === 0) this.#senders.delete(key);
      }
    }
  }

  #sweepExpired(now: number): void {
    for (const e of [...this.#pool.entries()]) {
      if (!e.inFlight && e.validUntil < now) {
        this.#finalize(e, { state: 'dropped', code: 'expired', message: `sponsorship expired at ${e.validUntil} before inclusion` });
      }
    }
  }

  // ── one bundle ──────────────────────────────────────────────────────────────────────────────────────────

  async #runBundle(executor: Executor, entries: PoolEntry[]): Promise<void> {
    const key = `executor:${this.#o.chain}:${executor.account.address.toLowerCase()}`;
    await this.#o.locks.withLock(key, EXECUTOR_LOCK_TTL_MS, async () => {
      let remaining = entries;
      // Each round either sends or removes at least one operation, so this ends.
      while (remaining.length > 0) {
        const gas = minBig(handleOpsGasLimit(remaining.map((e) => e.gas)), this.#gasBudget);
        const data = encodeHandleOps(
          remaining.map((e) => e.packed),
          this.#o.beneficiary,
        );
        // The fees and the simulation in one round trip (the transport batches calls made in one tick): the
        // simulation needs no fee, and a bundle that held an expired operation is simulated again without it.
        const [fees, sim] = await Promise.all([
          readFees(this.#o.client),
          simulateBundle(this.#o.client, { entryPoint: this.#o.entryPoint, from: executor.account.address, data, gas }),
        ]);
        const live = remaining.filter((e) => {
          if (e.validUntil >= Number(fees.blockTimestamp) + 1) return true;
          this.#finalize(e, { state: 'dropped', code: 'expired', message: `sponsorship expired at ${e.validUntil} before inclusion` });
          return false;
        });
        if (live.length !== remaining.length) {
          remaining = live;
          continue;
        }
        if (sim.kind === 'rpc') {
          this.#o.log.warn({ err: sim.message }, 'bundle simulation: the chain did not answer; will retry');
          await sleep(200);
          return; // entries go back to the pool (released by the caller)
        }
        if (sim.kind === 'failedOp') {
          const bad = remaining[sim.opIndex];
          if (!bad) throw new Error(`FailedOp names op ${sim.opIndex} of a ${remaining.length}-op bundle`);
          const detail = sim.inner ? `${sim.reason}: ${sim.inner.reason}` : sim.reason;
          // Later operations of the same sender cannot run without this one: they wait in the pool.
          remaining = remaining.filter((e) => e !== bad && !(sameSender(e, bad) && e.nonce > bad.nonce));
          if (sim.reason.startsWith('AA25')) await this.#settleNonceFailure(bad);
          else if (sim.reason.startsWith('AA22') || sim.reason.startsWith('AA32')) {
            this.#finalize(bad, { state: 'dropped', code: 'expired', message: detail });
          } else {
            this.#finalize(bad, { state: 'dropped', code: 'validation_failed', message: detail });
          }
          continue;
        }
        if (sim.kind === 'reverted') {
          if (remaining.length === 1) {
            this.#finalize(remaining[0]!, { state: 'dropped', code: 'validation_failed', message: `handleOps reverted: ${sim.reason}` });
            return;
          }
          // No operation named: find the culprit by sending them one at a time.
          this.#o.log.warn({ reason: sim.reason, ops: remaining.length }, 'bundle reverted without FailedOp; splitting');
          for (const e of remaining) await this.#sendBundle(executor, [e], fees, undefined);
          return;
        }
        await this.#sendBundle(executor, remaining, fees, { data });
        return;
      }
    });
  }

  /**
   * Sends a bundle and settles its operations from the receipt. `simulated` carries the calldata the bundle was
   * simulated with (encoding handleOps again would cost as much again); undefined after a split.
   */
  async #sendBundle(executor: Executor, entries: PoolEntry[], fees: FeeSnapshot, simulated: { data: Hex } | undefined): Promise<void> {
    const gas = minBig(handleOpsGasLimit(entries.map((e) => e.gas)), this.#gasBudget);
    const data =
      simulated?.data ??
      encodeHandleOps(
        entries.map((e) => e.packed),
        this.#o.beneficiary,
      );
    if (!simulated && entries.length === 1) {
      // After a split: simulate each operation on its own first.
      const sim = await simulateBundle(this.#o.client, { entryPoint: this.#o.entryPoint, from: executor.account.address, data, gas });
      if (sim.kind === 'failedOp' || sim.kind === 'reverted') {
        const reason = sim.kind === 'failedOp' ? sim.reason : `handleOps reverted: ${sim.reason}`;
        if (sim.kind === 'failedOp' && sim.reason.startsWith('AA25')) await this.#settleNonceFailure(entries[0]!);
        else this.#finalize(entries[0]!, { state: 'dropped', code: 'validation_failed', message: reason });
        return;
      }
      if (sim.kind === 'rpc') return;
    }
    // The point of no return, checked and marked in one tick (withdraw runs between ticks, never inside one): a
    // bundle holding a withdrawn entry is not sent; its other entries go back to the pool and into the next one.
    if (entries.some((e) => e.withdrawn)) return;
    for (const e of entries) e.carried = true;
    const sentAt = epochMs();
    const sent = await this.#executors.send(
      executor,
      { to: this.#o.entryPoint, data, gas, maxFeePerGas: fees.maxFeePerGas, maxPriorityFeePerGas: fees.maxPriorityFeePerGas },
      { syncSend: this.#o.syncSend, receiptPollMs: this.#o.receiptPollMs, receiptTimeoutMs: this.#o.receiptTimeoutMs },
    );
    this.#observe(entries.length, sent);
    recordBundleSent(entries, sentAt, sent.kind === 'receipt' ? sent.receipt.status : sent.kind);
    if (sent.kind === 'failed') {
      this.#o.log.warn({ executor: executor.account.address, err: describeError(sent.error) }, 'bundle transaction refused; will retry');
      for (const e of entries) this.#state(e.sender).expected = undefined;
      await sleep(100);
      return;
    }
    if (sent.kind === 'timeout') {
      this.#o.log.warn({ txHash: sent.txHash }, 'bundle transaction: no receipt in time; checking the chain per operation');
      for (const e of entries) {
        this.#state(e.sender).expected = undefined;
        try {
          const outcome = await this.#lookUp(e);
          if (outcome.state === 'included') this.#finalize(e, outcome);
        } catch {
          // stays pending; the next simulation decides (AA25 if it landed meanwhile)
        }
      }
      return;
    }
    const { receipt } = sent;
    this.#stats.bundles++;
    const bucket = (this.#stats.bySize[entries.length] ??= { bundles: 0, gasUsed: 0n, deployments: 0, wallets: 0 });
    bucket.bundles++;
    bucket.gasUsed += receipt.gasUsed;
    bucket.deployments = (bucket.deployments ?? 0) + entries.filter((e) => e.packed.initCode !== '0x').length;
    bucket.wallets = (bucket.wallets ?? 0) + new Set(entries.map((e) => e.sender.toLowerCase())).size;
    this.#stats.bundleGasUsed += receipt.gasUsed;
    if (receipt.status !== 'success') {
      this.#o.log.warn({ txHash: receipt.transactionHash, ops: entries.length }, 'bundle transaction reverted on chain');
      for (const e of entries) {
        this.#state(e.sender).expected = undefined;
        e.failedSends++;
        if (e.failedSends >= this.#o.maxFailedSends) {
          this.#finalize(e, { state: 'dropped', code: 'bundle_failed', message: `its bundle reverted on chain ${e.failedSends} times` });
        }
      }
      return;
    }
    this.#o.log.debug(
      { txHash: receipt.transactionHash, ops: entries.length, gasUsed: receipt.gasUsed.toString(), executor: executor.account.address },
      'bundle included',
    );
    const outcomes = outcomesFromLogs(receipt.logs, this.#o.entryPoint, receipt);
    for (const e of entries) {
      const outcome = outcomes.get(e.hash.toLowerCase());
      const st = this.#state(e.sender);
      if (outcome) {
        if (st.expected !== undefined && e.nonce + 1n > st.expected) st.expected = e.nonce + 1n;
        this.#finalize(e, outcome);
      } else {
        this.#o.log.warn({ hash: e.hash, txHash: receipt.transactionHash }, 'operation missing from its bundle receipt');
        st.expected = undefined;
      }
    }
  }

  #observe(operations: number, sent: SendResult): void {
    const observer = this.#o.observer;
    if (!observer) return;
    const chain = this.#o.chain;
    try {
      if (sent.kind === 'receipt') {
        const result = sent.receipt.status === 'success' ? 'included' : 'reverted';
        observer.bundleSent({ chain, operations, result, gasUsed: sent.receipt.gasUsed });
      } else {
        observer.bundleSent({ chain, operations, result: sent.kind === 'failed' ? 'refused' : 'timeout' });
      }
    } catch (e) {
      this.#o.log.error({ err: describeError(e) }, 'bundle observer threw');
    }
  }

  /**
   * AA25 (invalid nonce): either the nonce was used (by this very operation earlier, or another one) or there
   * is a gap before it. The chain tells which.
   */
  async #settleNonceFailure(e: PoolEntry): Promise<void> {
    const st = this.#state(e.sender);
    try {
      st.expected = await this.#chainNonce(e.sender);
      st.checkedAt = Date.now();
    } catch {
      st.expected = undefined;
      return;
    }
    if (e.nonce < st.expected) await this.#settleUsedNonceNow(e);
    // else: a gap; it waits in the pool for the missing nonce (or its expiry)
  }

  /** An operation whose nonce the chain has passed: included earlier (find its event) or superseded. */
  #settleUsedNonce(e: PoolEntry): void {
    e.inFlight = true; // keep it out of bundles while we look
    void this.#settleUsedNonceNow(e).finally(() => {
      e.inFlight = false;
    });
  }

  /** What the chain says of an operation we hold (its UserOperationEvent, or its nonce's use). */
  #lookUp(e: PoolEntry) {
    return lookupOperationOnChain(this.#o.client, {
      entryPoint: this.#o.entryPoint,
      hash: e.hash,
      sender: e.sender,
      nonce: e.nonce,
      ...(this.#o.logScan && { scan: this.#o.logScan }),
    });
  }

  async #settleUsedNonceNow(e: PoolEntry): Promise<void> {
    try {
      const outcome = await this.#lookUp(e);
      if (outcome.state !== 'unknown') this.#finalize(e, outcome);
    } catch (err) {
      this.#o.log.warn({ hash: e.hash, err: describeError(err) }, 'could not look an operation up on chain');
    }
  }

  #finalize(e: PoolEntry, outcome: OperationOutcome): void {
    if (!this.#pool.remove(e.hash)) return;
    if (outcome.state === 'included') {
      this.#stats.includedOps++;
      this.#o.onIncluded?.(e);
    } else if (outcome.state === 'dropped') {
      this.#stats.droppedOps++;
      this.#o.onDropped?.(e);
      this.#o.log.info({ hash: e.hash, sender: e.sender, nonce: e.nonce.toString(), code: outcome.code, reason: outcome.message }, 'operation dropped');
    }
    this.#outcomes.record(e.hash, outcome);
  }
}

const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms));
const minBig = (a: bigint, b: bigint) => (a < b ? a : b);
const sameSender = (a: PoolEntry, b: PoolEntry) => a.sender.toLowerCase() === b.sender.toLowerCase();
