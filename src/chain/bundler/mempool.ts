import type { Address, Hex } from 'viem';
import type { PackedUserOperation } from 'viem/account-abstraction';
import type { SignedUserOperation } from '../../api/v1alpha1/index.ts';
import { ChainError } from '../errors.ts';
import type { OperationGasLimits } from '../gas.ts';
import type { SubmittedTrace } from './traces.ts';

/** One operation the bundler holds. */
export interface PoolEntry {
  hash: Hex;
  sender: Address;
  nonce: bigint;
  signed: SignedUserOperation;
  packed: PackedUserOperation;
  gas: OperationGasLimits;
  /** Unix seconds; after it the operation can never be included. Infinity without a sponsorship window. */
  validUntil: number;
  /** Set while the entry sits in a bundle being simulated or sent. */
  inFlight: boolean;
  /** Failed bundle transactions this entry was part of (not simulation drops). */
  failedSends: number;
  submittedAt: number;
  /**
   * Set in the tick its bundle transaction is handed to the node: from then on the operation may be on chain, and
   * it can no longer be withdrawn (it stays set if that transaction fails: it may still have reached a node).
   */
  carried?: true;
  /** Withdrawn from the pool while a bundle being simulated held it: that bundle must not be sent with it. */
  withdrawn?: true;
  /** The trace it was submitted in, when tracing is on (traces.ts). */
  trace?: SubmittedTrace | undefined;
}

const senderKey = (a: Address) => a.toLowerCase();

/**
 * The bundler's mempool: operations by hash, and per sender in nonce order. Re-adding a hash is a no-op; a
 * different operation with the sender and nonce of a held one is refused (the first one signed wins; the
 * EntryPoint would execute at most one of them anyway).
 */
export class Mempool {
  readonly #byHash = new Map<string, PoolEntry>();
  /** Insertion order of senders = arrival order of their oldest held operation: the bundling order. */
  readonly #bySender = new Map<string, PoolEntry[]>();

  get size(): number {
    return this.#byHash.size;
  }

  get(hash: Hex): PoolEntry | undefined {
    return this.#byHash.get(hash.toLowerCase());
  }

  /** Adds an entry; returns false when the same hash is already held. Throws `nonce_conflict`. */
  add(entry: PoolEntry): boolean {
    const h = entry.hash.toLowerCase();
    if (this.#byHash.has(h)) return false;
    const key = senderKey(entry.sender);
    const list = this.#bySender.get(key) ?? [];
    const clash = list.find((e) => e.nonce === entry.nonce);
    if (clash) {
      throw new ChainError('nonce_conflict', `operation ${clash.hash} of ${entry.sender} with nonce ${entry.nonce} is already pending`, {
        details: { pending: clash.hash },
      });
    }
    let i = list.length;
    while (i > 0 && list[i - 1]!.nonce > entry.nonce) i--;
    list.splice(i, 0, entry);
    if (!this.#bySender.has(key)) this.#bySender.set(key, list);
    this.#byHash.set(h, entry);
    return true;
  }

  remove(hash: Hex): PoolEntry | undefined {
    const h = hash.toLowerCase();
    const entry = this.#byHash.get(h);
    if (!entry) return undefined;
    this.#byHash.delete(h);
    const key = senderKey(entry.sender);
    const list = this.#bySender.get(key);
    if (list) {
      const i = list.indexOf(entry);
      if (i >= 0) list.splice(i, 1);
      if (list.length === 0) this.#bySender.delete(key);
    }
    return entry;
  }

  /** Held operations of one sender, in nonce order. */
  ofSender(sender: Address): readonly PoolEntry[] {
    return this.#bySender.get(senderKey(sender)) ?? [];
  }

  /** Senders in bundling order, each with its operations in nonce order. */
  *senders(): Iterable<[Address, readonly PoolEntry[]]> {
    for (const list of this.#bySender.values()) {
      if (list.length > 0) yield [list[0]!.sender, list];
    }
  }

  /** Moves a sender to the back of the bundling order (after it was served), so no sender starves others. */
  rotate(sender: Address): void {
    const key = senderKey(sender);
    const list = this.#bySender.get(key);
    if (!list) return;
    this.#bySender.delete(key);
    this.#bySender.set(key, list);
  }

  entries(): Iterable<PoolEntry> {
    return this.#byHash.values();
  }
}
