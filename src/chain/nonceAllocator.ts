import type { Address, Hex } from 'viem';

interface Reservation {
  /** Operation signed with this nonce (undefined while it is being signed). */
  hash: Hex | undefined;
  /** Unix seconds after which the operation can never be included (its sponsorship expired). */
  validUntil: number;
}

/**
 * Sequential nonces (key 0) per wallet, tracked in memory. A nonce stays reserved from allocation until the
 * chain's nonce passes it (included), the bundler gives its operation up (released), or its sponsorship
 * expires unused. The next nonce is the smallest one at or above the chain's nonce that is not reserved —
 * equal to max(chain nonce, highest reserved + 1) in the normal case, but it also refills a hole left by a
 * dropped operation, without which every later operation of the wallet would wait forever (AA25).
 *
 * Callers serialize allocations per wallet with the (chain, sender) lock; the EntryPoint nonce is the fence
 * if they ever do not.
 */
export class NonceAllocator {
  readonly #bySender = new Map<string, Map<bigint, Reservation>>();
  /** Expiry of the latest operation given up per (sender, nonce): a reuse of the nonce signs a later one. */
  readonly #retired = new Map<string, Map<bigint, number>>();
  /**
   * Per wallet, one past the highest nonce seen included. The chain nonce a caller passes may have been read
   * just before an inclusion whose event already cleared that nonce's reservation; without this floor the
   * stale read would hand the used nonce out again.
   */
  readonly #floor = new Map<string, bigint>();
  readonly #expiryGraceSeconds: number;
  readonly #now: () => number;

  constructor(opts: { expiryGraceSeconds?: number; now?: () => number } = {}) {
    this.#expiryGraceSeconds = opts.expiryGraceSeconds ?? 30;
    this.#now = opts.now ?? (() => Math.floor(Date.now() / 1000));
  }

  /**
   * Picks and reserves the next nonce, given the EntryPoint's current nonce of the wallet, with the
   * sponsorship expiry to sign. When the nonce was given up before, the expiry is moved past the earlier
   * operation's so the new operation can never have the same hash as the one given up (same calls, same
   * second and same fees would otherwise sign to the very same operation, and its old outcome would stick).
   */
  allocate(sender: Address, readNonce: bigint, validUntil: number): { nonce: bigint; validUntil: number } {
    const key = sender.toLowerCase();
    const floor = this.#floor.get(key);
    if (floor !== undefined && readNonce >= floor) this.#floor.delete(key); // the chain has caught up
    const chainNonce = floor !== undefined && floor > readNonce ? floor : readNonce;
    const reserved = this.#prune(sender, chainNonce);
    let n = chainNonce;
    while (reserved.has(n)) n++;
    const retired = this.#retired.get(sender.toLowerCase())?.get(n);
    const until = retired !== undefined && retired >= validUntil ? retired + 1 : validUntil;
    reserved.set(n, { hash: undefined, validUntil: until });
    return { nonce: n, validUntil: until };
  }

  /** Records the operation signed with a reserved nonce (or reserves it: operations restored after a restart). */
  reserve(sender: Address, nonce: bigint, hash: Hex, validUntil: number): void {
    this.#map(sender).set(nonce, { hash, validUntil });
  }

  /** Frees a nonce whose operation will never be included. Only the reservation of that very operation. */
  release(sender: Address, nonce: bigint, hash?: Hex): void {
    const m = this.#bySender.get(sender.toLowerCase());
    const r = m?.get(nonce);
    if (!m || !r) return;
    if (hash !== undefined && r.hash?.toLowerCase() !== hash.toLowerCase()) return;
    m.delete(nonce);
    this.#retire(sender, nonce, r.validUntil);
    if (m.size === 0) this.#bySender.delete(sender.toLowerCase());
  }

  /** Forgets the reservations the chain has passed, after an inclusion (keeps memory bounded by wallets in flight). */
  included(sender: Address, nonce: bigint): void {
    const key = sender.toLowerCase();
    if ((this.#floor.get(key) ?? -1n) <= nonce) this.#floor.set(key, nonce + 1n);
    const m = this.#bySender.get(key);
    if (m) {
      for (const n of m.keys()) if (n <= nonce) m.delete(n);
      if (m.size === 0) this.#bySender.delete(key);
    }
    const retired = this.#retired.get(key);
    if (retired) {
      for (const n of retired.keys()) if (n <= nonce) retired.delete(n);
      if (retired.size === 0) this.#retired.delete(key);
    }
  }

  /** Reserved nonces of a wallet, ascending (for tests and diagnostics). */
  reserved(sender: Address): bigint[] {
    return [...(this.#bySender.get(sender.toLowerCase())?.keys() ?? [])].sort((a, b) => (a < b ? -1 : a > b ? 1 : 0));
  }

  #retire(sender: Address, nonce: bigint, validUntil: number): void {
    const key = sender.toLowerCase();
    const retired = this.#retired.get(key) ?? new Map<bigint, number>();
    retired.set(nonce, Math.max(validUntil, retired.get(nonce) ?? 0));
    this.#retired.set(key, retired);
  }

  #map(sender: Address): Map<bigint, Reservation> {
    const key = sender.toLowerCase();
    let m = this.#bySender.get(key);
    if (!m) {
      m = new Map();
      this.#bySender.set(key, m);
    }
    return m;
  }

  #prune(sender: Address, chainNonce: bigint): Map<bigint, Reservation> {
    const m = this.#map(sender);
    const expiredBefore = this.#now() - this.#expiryGraceSeconds;
    for (const [n, r] of m) {
      if (n < chainNonce || r.validUntil < expiredBefore) {
        m.delete(n);
        if (n >= chainNonce) this.#retire(sender, n, r.validUntil);
      }
    }
    const retired = this.#retired.get(sender.toLowerCase());
    if (retired) {
      for (const n of retired.keys()) if (n < chainNonce) retired.delete(n);
      if (retired.size === 0) this.#retired.delete(sender.toLowerCase());
    }
    return m;
  }
}
