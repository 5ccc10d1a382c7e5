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
  readonly #expiryGraceSeconds: number;
  readonly #now: () => number;

  constructor(opts: { expiryGraceSeconds?: number; now?: () => number } = {}) {
    this.#expiryGraceSeconds = opts.expiryGraceSeconds ?? 30;
    this.#now = opts.now ?? (() => Math.floor(Date.now() / 1000));
  }

  /** Picks and reserves the next nonce, given the EntryPoint's current nonce of the wallet. */
  allocate(sender: Address, chainNonce: bigint, validUntil: number): bigint {
    const reserved = this.#prune(sender, chainNonce);
    let n = chainNonce;
    while (reserved.has(n)) n++;
    reserved.set(n, { hash: undefined, validUntil });
    return n;
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
    if (hash !== undefined && r.hash !== undefined && r.hash.toLowerCase() !== hash.toLowerCase()) return;
    m.delete(nonce);
    if (m.size === 0) this.#bySender.delete(sender.toLowerCase());
  }

  /** Reserved nonces of a wallet, ascending (for tests and diagnostics). */
  reserved(sender: Address): bigint[] {
    return [...(this.#bySender.get(sender.toLowerCase())?.keys() ?? [])].sort((a, b) => (a < b ? -1 : a > b ? 1 : 0));
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
      if (n < chainNonce || r.validUntil < expiredBefore) m.delete(n);
    }
    return m;
  }
}
