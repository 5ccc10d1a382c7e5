import { getAddress, type Address } from 'viem';
import type { ExecutionRequest, PaymentQuote } from '../api/v1alpha1/index.ts';
import type { ChainName } from '../config/chains.ts';

/**
 * Quote-unique amounts: what binds an ordinary transfer to the one quote it was made for, with no field a client
 * of the spec does not send. Each amount a 402 asks for differs, in its low-order units, from every amount another
 * open quote holds of that token on that chain; a proof pays a quote only with exactly its amount, mined after the
 * quote was made and before its hold ends. Someone who sees the transfer on chain cannot use it for their own
 * request: their quote asks another amount. See docs/payments.md.
 */

/** The amounts open quotes hold, per chain and token, as the execution controller's cache (and this process) knows them. */
export interface HeldAmounts {
  /** The raw amounts of `token` that quotes hold on `chain` at `now`. */
  held(chain: ChainName, token: Address, now: Date): ReadonlySet<bigint>;
  /**
   * Holds a quote this process just made until the cache shows it on its request: two quotes made at once (or one
   * made before the other's status write comes back through the watch) must not pick the same amount.
   */
  hold(chain: ChainName, quote: PaymentQuote): void;
}

/** The quotes of a request whose amounts are held: its current one and the earlier ones it keeps. */
export function quotesOf(r: ExecutionRequest): PaymentQuote[] {
  const p = r.status?.payment;
  return [...(p?.quote ? [p.quote] : []), ...(p?.earlierQuotes ?? [])].filter((q) => q.reservedUntil !== undefined);
}

/**
 * An amount stays held this long past its quote's `reservedUntil` before another quote may ask it: a transfer pays
 * the quote when its block's timestamp is within the hold, and block timestamps are whole seconds, set by the chain,
 * behind or ahead of this clock. So the same amount is never open to two quotes for a block at the edge.
 */
export const HOLD_MARGIN_MS = 30_000;

const holdsAt = (q: PaymentQuote, now: Date): boolean =>
  q.reservedUntil !== undefined && Date.parse(q.reservedUntil) + HOLD_MARGIN_MS > now.getTime();

/**
 * `quoted(chain)` lists the requests of a chain that carry a quote with held amounts (an informer index); this
 * adds the quotes made here and not yet seen there.
 */
export function createHeldAmounts(quoted: (chain: ChainName) => Iterable<ExecutionRequest>): HeldAmounts {
  const recent = new Map<ChainName, PaymentQuote[]>();
  return {
    held(chain, token, now) {
      const out = new Set<bigint>();
      const add = (q: PaymentQuote) => {
        if (!holdsAt(q, now)) return;
        for (const t of q.tokens) if (getAddress(t.address) === getAddress(token)) out.add(BigInt(t.amountRaw));
      };
      for (const r of quoted(chain)) for (const q of quotesOf(r)) add(q);
      const mine = (recent.get(chain) ?? []).filter((q) => holdsAt(q, now));
      recent.set(chain, mine); // forget what no longer holds
      for (const q of mine) add(q);
      return out;
    },
    hold(chain, quote) {
      recent.set(chain, [...(recent.get(chain) ?? []), quote]);
    },
  };
}

/** How many low-order units an amount may move by: 0.001 of a token (1000 units of a 6-decimal stablecoin). */
const spanOf = (decimals: number): bigint => 10n ** BigInt(Math.max(decimals - 3, 2));
const TRIES = 64;

/**
 * `quote` with each token's amount raised by a random number of low-order units (at most 0.001 token, or 0.01 when
 * that range is crowded) to one that `taken` does not hold; undefined when no free amount was found, which takes
 * thousands of open quotes of the same price.
 */
export function withUniqueAmounts(
  quote: PaymentQuote,
  taken: (token: Address) => ReadonlySet<bigint>,
  random: () => number = Math.random,
): PaymentQuote | undefined {
  const tokens: PaymentQuote['tokens'] = [];
  for (const t of quote.tokens) {
    const held = taken(t.address as Address);
    const base = BigInt(t.amountRaw);
    let found: bigint | undefined;
    for (const span of [spanOf(t.decimals), spanOf(t.decimals) * 10n]) {
      for (let i = 0; i < TRIES && found === undefined; i++) {
        const candidate = base + 1n + BigInt(Math.floor(random() * Number(span)));
        if (!held.has(candidate)) found = candidate;
      }
      if (found !== undefined) break;
    }
    if (found === undefined) return undefined;
    tokens.push({ ...t, amountRaw: found.toString() });
  }
  return { ...quote, tokens };
}
