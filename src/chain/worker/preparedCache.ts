import type { Call, SignedUserOperation } from '../../api/v1alpha1/index.ts';
import type { PrepareOptions, WalletRef } from '../types.ts';

/** Entries kept before expired ones are swept. */
const SWEEP_AT = 10_000;
/** An operation is handed out again only while its sponsorship has this long left. */
const REUSE_MARGIN_SECONDS = 60;

/**
 * Operations signed but not yet submitted, by (request, wallet, calls). A prepare retried for the same request
 * (the caller crashed or timed out before persisting the first answer) gets the same operation instead of a
 * second nonce, which would leave a hole no later operation of the wallet could pass. Submitting an
 * operation forgets it: from then on the bundler knows it by hash.
 */
export class PreparedOperations {
  readonly #byKey = new Map<string, { op: SignedUserOperation; validUntil: number }>();
  readonly #keyByHash = new Map<string, string>();
  /** The key of the operation held for each request (one at most: a request has one nonce until submitted). */
  readonly #keyByRequest = new Map<string, string>();

  static keyOf(ref: WalletRef, calls: readonly Call[], opts: PrepareOptions): string {
    return `${PreparedOperations.#requestKey(ref, opts)}\u0000${JSON.stringify(calls)}`;
  }

  static #requestKey(ref: WalletRef, opts: PrepareOptions): string {
    return `${opts.requestId}\u0000${ref.apiClient}\u0000${ref.agentId}`;
  }

  /**
   * The operation held for this request when it was signed with other calls (a retry whose calls changed: the
   * auto mode's transfer amount follows a fresh quote). Its nonce must go to the new operation, not a second
   * one: the caller re-signs with it after `forget`.
   */
  heldWithOtherCalls(ref: WalletRef, calls: readonly Call[], opts: PrepareOptions): SignedUserOperation | undefined {
    const key = this.#keyByRequest.get(PreparedOperations.#requestKey(ref, opts));
    if (key === undefined || key === PreparedOperations.keyOf(ref, calls, opts)) return undefined;
    return this.#byKey.get(key)?.op;
  }

  /** The operation signed earlier for this key, while its sponsorship has a minute left (an older one is left to expire with its nonce). */
  reusable(key: string, nowSeconds: number): SignedUserOperation | undefined {
    const earlier = this.#byKey.get(key);
    return earlier && earlier.validUntil > nowSeconds + REUSE_MARGIN_SECONDS ? earlier.op : undefined;
  }

  remember(key: string, op: SignedUserOperation, validUntil: number): void {
    if (this.#byKey.size >= SWEEP_AT) {
      const now = Math.floor(Date.now() / 1000);
      for (const p of [...this.#byKey.values()]) if (p.validUntil <= now) this.forget(p.op.hash);
    }
    this.#byKey.set(key, { op, validUntil });
    this.#keyByHash.set(op.hash.toLowerCase(), key);
    this.#keyByRequest.set(key.slice(0, key.lastIndexOf('\u0000')), key);
  }

  /**
   * Whether `op` is, field for field, an operation this worker signed and still holds: its hash is then the
   * one computed at signing, and submit need not hash it again (a third of the cost of signing it).
   */
  signedHere(op: SignedUserOperation): boolean {
    const key = this.#keyByHash.get(op.hash.toLowerCase());
    const mine = key === undefined ? undefined : this.#byKey.get(key)?.op;
    if (!mine) return false;
    const fields = new Set([...Object.keys(mine), ...Object.keys(op)]) as Set<keyof SignedUserOperation>;
    for (const f of fields) if (mine[f] !== op[f]) return false;
    return true;
  }

  forget(hash: string): void {
    const key = this.#keyByHash.get(hash.toLowerCase());
    if (key === undefined) return;
    this.#keyByHash.delete(hash.toLowerCase());
    this.#byKey.delete(key);
    const requestKey = key.slice(0, key.lastIndexOf('\u0000'));
    if (this.#keyByRequest.get(requestKey) === key) this.#keyByRequest.delete(requestKey);
  }
}
