import type { Address } from 'viem';

/** What is priced: the chain's native coin, or a token by its address. */
export type Asset = 'native' | Address;

/** One asset's USD price: `answer / 10^decimals` USD per whole unit of an asset with `assetDecimals` decimals. */
export interface Priced {
  kind: 'priced';
  answer: bigint;
  decimals: number;
  assetDecimals: number;
  /** Where it came from: a configured figure, an AggregatorV3 feed, Aave's oracle. */
  source: 'configured' | 'feed' | 'aaveOracle';
  /** The feed's updatedAt (Unix seconds), for a feed's answer. */
  updatedAt?: number;
}

/** No price for the asset, and why (nothing configured, a stale or non-positive answer, a read that failed). */
export interface Unpriced {
  kind: 'unpriced';
  reason: string;
}

export type AssetPrice = Priced | Unpriced;

/** The key an asset is looked up by: `native`, or its address in lower case. */
export const assetKey = (a: Asset): string => (a === 'native' ? 'native' : a.toLowerCase());

/** A feed's round: its answer, when it was updated (Unix seconds) and the feed's decimals. */
export interface FeedRound {
  answer: bigint;
  updatedAt: bigint;
  decimals: number;
}

/**
 * A feed's round as a price, or unpriced when it cannot be trusted: an answer that is not positive, an update
 * older than `maxAgeSeconds` at `now`, or one from the future by more than a minute (a clock that is off, or a
 * feed that lies). Never guessed.
 */
export function priceOfRound(round: FeedRound, assetDecimals: number, now: Date, maxAgeSeconds: number, source: 'feed' | 'aaveOracle' = 'feed'): AssetPrice {
  if (round.answer <= 0n) return { kind: 'unpriced', reason: `the ${source === 'feed' ? 'feed' : 'oracle'} answers ${round.answer}, not a price` };
  const nowSeconds = BigInt(Math.floor(now.getTime() / 1000));
  const age = nowSeconds - round.updatedAt;
  if (age > BigInt(maxAgeSeconds)) return { kind: 'unpriced', reason: `the feed's answer is ${age} s old, more than the ${maxAgeSeconds} s allowed` };
  if (age < -60n) return { kind: 'unpriced', reason: `the feed's answer is dated ${-age} s in the future` };
  return { kind: 'priced', answer: round.answer, decimals: round.decimals, assetDecimals, source, updatedAt: Number(round.updatedAt) };
}

/** A configured decimal USD figure ("3000.5") as a price. */
export function configuredPrice(usd: string, assetDecimals: number): AssetPrice {
  const [whole, frac = ''] = usd.split('.');
  const answer = BigInt(`${whole}${frac}`);
  if (answer <= 0n) return { kind: 'unpriced', reason: `its configured price is ${usd}` };
  return { kind: 'priced', answer, decimals: frac.length, assetDecimals, source: 'configured' };
}

/** `amount` base units of an asset at `price`, in micro-dollars, rounded up (a limit is never undercounted). */
export function microUsdOf(amount: bigint, price: Priced): bigint {
  const numerator = amount * price.answer * 1_000_000n;
  const denominator = 10n ** BigInt(price.assetDecimals + price.decimals);
  return (numerator + denominator - 1n) / denominator;
}
