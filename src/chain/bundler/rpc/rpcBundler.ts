import type { Address, Hex } from 'viem';
import type { SignedUserOperation } from '../../../api/v1alpha1/index.ts';
import { parseSponsorshipWindow } from '../../paymaster.ts';
import { describeError } from '../../revert.ts';
import type { OperationOutcome } from '../../types.ts';
import type { UserOperation07 } from '../../userOperation.ts';
import { lookupOperationOnChain } from '../outcomeLookup.ts';
import { RecentOutcomes, type OutcomeListener } from '../outcomes.ts';
import { outcomesFromLogs } from '../receipt.ts';
import type { BundlerBaseOptions, HeldOperation, OperationBundler, OperationBundlerStats, WithdrawAnswer } from '../types.ts';
import { BundlerRpcError, isTransientRejection, type BundlerClient } from './client.ts';

export interface RpcBundlerOptions extends BundlerBaseOptions {
  bundler: BundlerClient;
  receiptPollMs: number;
  recheckAfterMs: number;
  maxInFlightPerSender: number;
}

interface Entry extends HeldOperation {
  signed: SignedUserOperation;
  op: UserOperation07;
  /** Unix seconds; Infinity without a sponsorship window. */
  validUntil: number;
  /** When the bundler last took it (eth_sendUserOperation answered); undefined while it waits its turn. */
  handedAt?: number;
  /** When the bundler was last asked whether it still holds it. */
  checkedAt: number;
}

/** Messages of bundlers that already hold the operation: it was handed on before (a restart, a lost answer). */
const ALREADY_HELD = /already (known|in mempool|present in mempool|exists)|duplicate/i;
/** AA25: a nonce above the wallet's: an earlier operation of the wallet is still on its way. */
const NONCE_AHEAD = /AA25/;
const WARN_EVERY_MS = 10_000;

/**
 * Bundling by an outside ERC-4337 bundler (Alto, a hosted one) over JSON-RPC. It holds each operation until its
 * outcome is final: hands it on with eth_sendUserOperation (a wallet's operations in nonce order, at most
 * `maxInFlightPerSender` of them handed on at once), polls eth_getUserOperationReceipt, and reads each reported
 * inclusion back from the chain through our own node; what the bundler does not report, the chain settles. An operation the bundler no longer knows (it restarted and
 * lost its in-memory mempool) is sent again, once the chain shows its nonce unused: the same signed operation, so
 * it can run at most once. Withdrawal (the kill switch) takes back only what was not handed on yet: an outside
 * bundler has no way to give an operation back.
 */
export class RpcBundler implements OperationBundler {
  readonly kind = 'rpc' as const;
  readonly #o: RpcBundlerOptions & { now: () => number };
  readonly #held = new Map<string, Entry>();
  readonly #outcomes: RecentOutcomes;
  readonly #stats: OperationBundlerStats & { handedOn: number; resent: number } = { includedOps: 0, droppedOps: 0, withdrawnOps: 0, handedOn: 0, resent: 0 };
  #closed = false;
  #wakeLoop: (() => void) | undefined;
  #lastWarnAt = 0;
  readonly #loop: Promise<void>;

  constructor(opts: RpcBundlerOptions) {
    this.#o = { now: () => Math.floor(Date.now() / 1000), ...opts };
    this.#outcomes = new RecentOutcomes(opts.recentOutcomes ?? 10_000, (e) => this.#o.log.error({ err: describeError(e) }, 'outcome listener threw'));
    this.#loop = this.#run();
  }

  get stats(): Readonly<OperationBundlerStats & { handedOn: number; resent: number }> {
    return this.#stats;
  }

  submit(signed: SignedUserOperation, op: UserOperation07): 'accepted' | 'duplicate' {
    if (this.#closed) throw new Error('bundler is closed');
    const hash = signed.hash as Hex;
    if (this.#held.has(hash.toLowerCase()) || this.#outcomes.get(hash)) return 'duplicate';
    const window = op.paymaster ? (this.#o.sponsorshipWindow ?? parseSponsorshipWindow)(op.paymasterData) : undefined;
    this.#held.set(hash.toLowerCase(), {
      hash,
      sender: op.sender,
      nonce: op.nonce,
      signed,
      op,
      validUntil: window && window.validUntil !== 0 ? window.validUntil : Number.POSITIVE_INFINITY,
      checkedAt: Date.now(),
    });
    this.#wakeLoop?.();
    return 'accepted';
  }

  outcomeOf(hash: Hex): OperationOutcome | undefined {
    return this.#outcomes.get(hash) ?? (this.#held.has(hash.toLowerCase()) ? { state: 'pending' } : undefined);
  }

  outcomeAgeMs(hash: Hex): number | undefined {
    return this.#outcomes.ageMs(hash);
  }

  forget(hash: Hex): void {
    this.#outcomes.forget(hash);
  }

  remember(hash: Hex, outcome: OperationOutcome): void {
    if (outcome.state === 'included' || outcome.state === 'dropped') this.#outcomes.remember(hash, outcome);
  }

  /** Nothing to resync: the outside bundler reads its nonces from the chain itself. */
  resyncNonces(): void {}

  withdraw(op: HeldOperation): WithdrawAnswer {
    const held = this.#held.get(op.hash.toLowerCase());
    if (!held) {
      const outcome = this.#outcomes.get(op.hash);
      // Not held: it may still sit in the outside bundler's mempool (handed on by this process before a restart).
      return outcome ? { state: 'settled', outcome } : { state: 'notHeld' };
    }
    if (held.handedAt !== undefined) return { state: 'sent' };
    // Handed on in nonce order: a waiting operation's later ones of the wallet wait too.
    const entries = this.#ofSender(op.sender).filter((e) => e.nonce >= held.nonce);
    const message = 'withdrawn before it was handed to the bundler';
    for (const e of entries) {
      this.#held.delete(e.hash.toLowerCase());
      this.#outcomes.record(e.hash, { state: 'dropped', code: 'withdrawn', message });
    }
    this.#stats.withdrawnOps += entries.length;
    return { state: 'withdrawn', entries: entries.map(({ hash, sender, nonce }) => ({ hash, sender, nonce })) };
  }

  onOutcome(listener: OutcomeListener): () => void {
    return this.#outcomes.subscribe(listener);
  }

  async close(): Promise<void> {
    this.#closed = true;
    this.#wakeLoop?.();
    await this.#loop;
  }

  // ── the loop ────────────────────────────────────────────────────────────────────────────────────────────

  async #run(): Promise<void> {
    while (!this.#closed) {
      try {
        await this.#handOn();
        await this.#poll();
      } catch (e) {
        this.#o.log.error({ chain: this.#o.chain, err: describeError(e) }, 'rpc bundler: a round failed');
      }
      if (this.#closed) break;
      await new Promise<void>((resolve) => {
        const t = setTimeout(resolve, this.#o.receiptPollMs);
        this.#wakeLoop = () => {
          clearTimeout(t);
          resolve();
        };
      });
      this.#wakeLoop = undefined;
    }
  }

  #ofSender(sender: Address): Entry[] {
    const key = sender.toLowerCase();
    return [...this.#held.values()].filter((e) => e.sender.toLowerCase() === key).sort((a, b) => (a.nonce < b.nonce ? -1 : a.nonce > b.nonce ? 1 : 0));
  }

  /** Hands on each wallet's next operations in nonce order, up to maxInFlightPerSender handed on at once. */
  async #handOn(): Promise<void> {
    const bySender = new Map<string, Entry[]>();
    for (const e of this.#held.values()) {
      const list = bySender.get(e.sender.toLowerCase()) ?? [];
      list.push(e);
      bySender.set(e.sender.toLowerCase(), list);
    }
    const now = this.#o.now();
    await Promise.all(
      [...bySender.values()].map(async (list) => {
        list.sort((a, b) => (a.nonce < b.nonce ? -1 : a.nonce > b.nonce ? 1 : 0));
        let inFlight = list.filter((e) => e.handedAt !== undefined).length;
        for (const e of list) {
          if (e.handedAt !== undefined) continue;
          if (e.validUntil < now) {
            await this.#settleFromChain(e, { state: 'dropped', code: 'expired', message: `sponsorship expired at ${e.validUntil} before the bundler took it` });
            continue;
          }
          if (inFlight >= this.#o.maxInFlightPerSender) break;
          if (!(await this.#send(e))) break; // later nonces wait behind this one
          inFlight++;
        }
      }),
    );
  }

  /** eth_sendUserOperation; true once the bundler holds it. */
  async #send(e: Entry): Promise<boolean> {
    try {
      await this.#o.bundler.sendUserOperation(e.op);
    } catch (err) {
      if (!(err instanceof BundlerRpcError)) throw err;
      if (err.kind === 'rejected' && ALREADY_HELD.test(err.message)) {
        // Held already: handed on before.
      } else if (isTransientRejection(err) || NONCE_AHEAD.test(err.message)) {
        this.#warn({ hash: e.hash, err: err.message }, 'rpc bundler: the bundler did not take an operation yet; trying again');
        return false;
      } else {
        // Refused for good, unless the chain shows it included or its nonce used already.
        await this.#settleFromChain(e, { state: 'dropped', code: 'bundler_rejected', message: `the bundler at ${this.#o.bundler.origin} refused it: ${err.message}` });
        return false;
      }
    }
    if (e.handedAt === undefined) this.#stats.handedOn++;
    e.handedAt = Date.now();
    e.checkedAt = Date.now();
    return true;
  }

  /**
   * Receipts of the operations handed on. One without a receipt for recheckAfterMs is looked up on the chain (the
   * source of truth whatever the bundler says: included, or its nonce used by another, settles it), fails once its
   * sponsorship has expired, and is sent again when the bundler no longer holds it.
   */
  async #poll(): Promise<void> {
    const handed = [...this.#held.values()].filter((e) => e.handedAt !== undefined);
    await Promise.all(
      handed.map(async (e) => {
        let receipt;
        try {
          receipt = await this.#o.bundler.getUserOperationReceipt(e.hash);
        } catch (err) {
          this.#warn({ hash: e.hash, err: describeError(err) }, 'rpc bundler: no receipt answer');
        }
        if (receipt && (await this.#included(e, receipt.receipt.transactionHash))) return;
        if (Date.now() - e.checkedAt < this.#o.recheckAfterMs) return;
        e.checkedAt = Date.now();
        const onChain = await this.#lookup(e);
        if (onChain === undefined) return; // our node did not answer: next time
        if (onChain.state === 'included' || onChain.state === 'dropped') return this.#finalize(e, onChain);
        if (e.validUntil < this.#o.now()) return this.#finalize(e, { state: 'dropped', code: 'expired', message: `sponsorship expired at ${e.validUntil} before inclusion` });
        const known = await this.#o.bundler.knowsUserOperation(e.hash).catch(() => true); // no answer: assume it holds it
        if (known) return;
        // Lost by the bundler, not run by the chain: the same operation goes again.
        this.#o.log.warn({ chain: this.#o.chain, hash: e.hash }, 'rpc bundler: the bundler no longer holds an operation the chain has not run; sending it again');
        this.#stats.resent++;
        e.handedAt = undefined; // waits its turn again if the bundler does not take it now
        await this.#send(e);
      }),
    );
  }

  /** The bundler reports an inclusion: read the transaction's receipt from our own node and take the outcome from its logs. */
  async #included(e: Entry, txHash: Hex): Promise<boolean> {
    const receipt = await this.#o.client.getTransactionReceipt({ hash: txHash }).catch(() => undefined);
    if (!receipt) return false; // our node does not have it yet (or the bundler is wrong): the recheck decides
    const outcome = outcomesFromLogs(receipt.logs, this.#o.entryPoint, receipt).get(e.hash.toLowerCase());
    if (!outcome) {
      this.#warn({ hash: e.hash, txHash }, 'rpc bundler: the bundler named a transaction that does not carry the operation');
      return false;
    }
    this.#finalize(e, outcome);
    return true;
  }

  async #lookup(e: Entry): Promise<OperationOutcome | undefined> {
    return lookupOperationOnChain(this.#o.client, {
      entryPoint: this.#o.entryPoint,
      hash: e.hash,
      sender: e.sender,
      nonce: e.nonce,
      ...(this.#o.logScan && { scan: this.#o.logScan }),
    }).catch(() => undefined);
  }

  /** Settles `e` with `fallback` unless the chain has it (included) or has used its nonce (dropped). */
  async #settleFromChain(e: Entry, fallback: OperationOutcome): Promise<void> {
    const onChain = await this.#lookup(e);
    if (onChain === undefined) return; // the chain did not answer: decide next round
    this.#finalize(e, onChain.state === 'unknown' ? fallback : onChain);
  }

  #finalize(e: Entry, outcome: OperationOutcome): void {
    if (!this.#held.delete(e.hash.toLowerCase())) return;
    const op = { hash: e.hash, sender: e.sender, nonce: e.nonce };
    if (outcome.state === 'included') {
      this.#stats.includedOps++;
      this.#o.onIncluded?.(op);
    } else if (outcome.state === 'dropped') {
      this.#stats.droppedOps++;
      this.#o.onDropped?.(op);
    }
    this.#outcomes.record(e.hash, outcome);
  }

  #warn(fields: Record<string, unknown>, msg: string): void {
    if (Date.now() - this.#lastWarnAt < WARN_EVERY_MS) return;
    this.#lastWarnAt = Date.now();
    this.#o.log.warn({ chain: this.#o.chain, bundler: this.#o.bundler.origin, ...fields }, msg);
  }
}
