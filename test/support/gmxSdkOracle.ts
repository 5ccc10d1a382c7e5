/**
 * GMX's SDK (@gmx-io/sdk 1.4.0, unpacked, never installed: scripts/lib/gmxSdk.ts) as the oracle the perp-v2 client's
 * arithmetic is compared with: its own utilities, called on inputs built from the same values. The SDK's MarketInfo
 * has ~80 fields; `toSdkMarketInfo` fills those the compared functions read, from our MarketParams and prices.
 * `randomMarket` / `randomPosition` draw realistic markets and positions from a seeded PRNG, so a failure replays.
 */
import type { Address } from 'viem';
import { requireGmxSdk } from '../../scripts/lib/gmxSdk.ts';
import type { MarketParams, PricedMarket } from '../../src/protocols/gmxV2/math/market.ts';
import type { TokenPrices } from '../../src/protocols/gmxV2/math/units.ts';

/* eslint-disable @typescript-eslint/no-explicit-any -- the SDK's CommonJS build is untyped here */
type Module = Record<string, any>;
const load = (file: string) => requireGmxSdk<Module>(`build/cjs/src/${file}`);

export const sdk = {
  dataStore: load('configs/dataStore.js'),
  hash: load('utils/hash.js'),
  positions: load('utils/positions.js'),
  fees: load('utils/fees/index.js'),
  prices: load('utils/prices.js'),
  trade: load('utils/trade/trade.js'),
  increase: load('utils/trade/increase.js'),
  decrease: load('utils/trade/decrease.js'),
  markets: load('utils/markets.js'),
  tokens: load('utils/tokens.js'),
  orders: load('types/orders.js'),
};

const sdkToken = (address: Address, symbol: string, p: TokenPrices) => ({
  address,
  symbol,
  decimals: p.decimals,
  prices: { minPrice: p.min, maxPrice: p.max },
});

/** The SDK's MarketInfo for our market: the same numbers under the SDK's names (most are ours too). */
export function toSdkMarketInfo(m: PricedMarket): Module {
  return {
    ...m,
    marketTokenAddress: m.marketToken,
    indexTokenAddress: m.indexToken,
    longTokenAddress: m.longToken,
    shortTokenAddress: m.shortToken,
    isSameCollaterals: m.longToken === m.shortToken,
    isSpotOnly: false,
    indexToken: sdkToken(m.indexToken, 'INDEX', m.prices.index),
    longToken: sdkToken(m.longToken, 'LONG', m.prices.long),
    shortToken: sdkToken(m.shortToken, 'SHORT', m.prices.short),
  };
}

export { sdkToken };

/** A small seeded PRNG (mulberry32) with the draws the generators need. */
export function prng(seed: number) {
  let s = seed >>> 0;
  const next = () => {
    s = (s + 0x6d2b79f5) >>> 0;
    let t = s;
    t = Math.imul(t ^ (t >>> 15), t | 1);
    t ^= t + Math.imul(t ^ (t >>> 7), t | 61);
    return ((t ^ (t >>> 14)) >>> 0) / 4294967296;
  };
  const r = {
    next,
    bool: (pTrue = 0.5) => next() < pTrue,
    int: (lo: number, hi: number) => lo + Math.floor(next() * (hi - lo + 1)),
    pick: <T>(xs: readonly T[]): T => xs[Math.floor(next() * xs.length)]!,
    /** A bigint in [lo, hi], log-uniform when the range spans decades (sizes from $1 to $1B alike). */
    logBig: (lo: bigint, hi: bigint): bigint => {
      if (lo <= 0n) lo = 1n;
      const a = Math.log(Number(lo));
      const b = Math.log(Number(hi));
      const x = BigInt(Math.floor(Math.exp(a + (b - a) * next())));
      const wiggle = BigInt(Math.floor(next() * 1e6));
      const v = (x * (1_000_000n + wiggle)) / 1_000_000n;
      return v < lo ? lo : v > hi ? hi : v;
    },
    /** A 30-decimal factor from a float (e.g. 0.0005 → 5e26), with 9 significant digits drawn. */
    factor: (lo: number, hi: number): bigint => BigInt(Math.round((lo + (hi - lo) * next()) * 1e9)) * 10n ** 21n,
  };
  return r;
}
export type Prng = ReturnType<typeof prng>;

const USD = 10n ** 30n;
const ETH: Address = '0x82aF49447D8a07e3bd95BD0d56f35241523fBab1';
const BTC: Address = '0x47904963fc8b2340414262125aF798B9655E58Cd';
const DOGE: Address = '0xC4da4c24fd591125c3F47b340b6f4f76111883d8';
const USDC: Address = '0xaf88d065e77c8cC2239327C5EDb3A432268e5831';
const MARKET: Address = '0x70d95587d40A2caf56bd97485aB3Eec10Bee6336';

/** A price range around `usd` dollars per whole token (min ≤ max, up to 0.3% apart). */
function pricesAround(r: Prng, usd: number, decimals: number): TokenPrices {
  const min = BigInt(Math.round(usd * 1e9)) * 10n ** 21n;
  const spreadBps = r.bool(0.3) ? 0n : BigInt(r.int(0, 30));
  return { decimals, min, max: min + (min * spreadBps) / 10_000n };
}

/**
 * A market like GMX's: an index token of 18, 8 or 6 decimals priced from cents to $100k, backed by itself (ETH/USD
 * [ETH-USDC]) or by another token, USDC on the short side; open interest, pools and impact pool from empty to
 * billions; fee, impact, collateral and PnL factors in GMX's ranges, each sometimes zero.
 */
export function randomMarket(r: Prng): PricedMarket {
  const kind = r.pick(['eth', 'btc', 'synthetic'] as const);
  const indexDecimals = kind === 'eth' ? 18 : kind === 'btc' ? 8 : r.pick([18, 8, 6]);
  const indexUsd = kind === 'eth' ? 500 + r.next() * 9_500 : kind === 'btc' ? 10_000 + r.next() * 140_000 : 10 ** (r.next() * 7 - 2);
  const index = pricesAround(r, indexUsd, indexDecimals);
  const indexToken = kind === 'eth' ? ETH : kind === 'btc' ? BTC : DOGE;
  const sameLong = kind !== 'synthetic' && r.bool(0.7);
  const long = sameLong ? index : pricesAround(r, 500 + r.next() * 4_000, 18);
  const short = pricesAround(r, 0.995 + r.next() * 0.01, 6);
  const oi = (usdHi: bigint) => (r.bool(0.1) ? 0n : r.logBig(USD, usdHi * USD));
  const inTokens = (usd: bigint) => (usd === 0n ? 0n : (usd * 10n ** BigInt(indexDecimals)) / ((index.min * BigInt(r.int(60, 140))) / 100n) || 1n);
  const longInterestUsd = oi(500_000_000n);
  const shortInterestUsd = oi(500_000_000n);
  const zeroOr = (f: () => bigint, pZero = 0.15) => (r.bool(pZero) ? 0n : f());
  const exponent = () => (r.bool(0.3) ? USD : r.factor(1.2, 2.5));
  const params: MarketParams = {
    marketToken: MARKET,
    indexToken,
    longToken: sameLong ? indexToken : ETH,
    shortToken: USDC,
    isDisabled: false,
    positionFeeFactorForBalanceWasImproved: zeroOr(() => r.factor(0.0002, 0.0005)),
    positionFeeFactorForBalanceWasNotImproved: zeroOr(() => r.factor(0.0004, 0.0008)),
    positionImpactFactorPositive: zeroOr(() => r.factor(1e-11, 5e-9)),
    positionImpactFactorNegative: zeroOr(() => r.factor(2e-11, 1e-8)),
    positionImpactExponentFactorPositive: exponent(),
    positionImpactExponentFactorNegative: exponent(),
    maxPositionImpactFactorPositive: zeroOr(() => r.factor(0.0001, 0.01)),
    maxPositionImpactFactorNegative: zeroOr(() => r.factor(0.0001, 0.01)),
    maxPositionImpactFactorForLiquidations: zeroOr(() => r.factor(0, 0.01), 0.3),
    minCollateralFactor: r.factor(0.005, 0.02),
    minCollateralFactorForLiquidation: r.factor(0.004, 0.02),
    minCollateralFactorForOpenInterestLong: zeroOr(() => r.factor(1e-11, 1e-9), 0.3),
    minCollateralFactorForOpenInterestShort: zeroOr(() => r.factor(1e-11, 1e-9), 0.3),
    minCollateralUsd: zeroOr(() => BigInt(r.int(1, 10)) * USD, 0.1),
    minPositionSizeUsd: BigInt(r.int(0, 10)) * USD,
    borrowingFactorLong: r.factor(1e-9, 1e-7),
    borrowingFactorShort: r.factor(1e-9, 1e-7),
    borrowingExponentFactorLong: exponent(),
    borrowingExponentFactorShort: exponent(),
    fundingFactor: r.factor(1e-9, 1e-7),
    fundingExponentFactor: exponent(),
    reserveFactorLong: r.factor(0.3, 1.2),
    reserveFactorShort: r.factor(0.3, 1.2),
    openInterestReserveFactorLong: r.factor(0.3, 1),
    openInterestReserveFactorShort: r.factor(0.3, 1),
    maxOpenInterestLong: r.logBig(USD, 10n ** 9n * USD),
    maxOpenInterestShort: r.logBig(USD, 10n ** 9n * USD),
    maxLongPoolAmount: r.logBig(1n, 10n ** 30n),
    maxShortPoolAmount: r.logBig(1n, 10n ** 18n),
    maxPnlFactorForTradersLong: r.factor(0.05, 0.9),
    maxPnlFactorForTradersShort: r.factor(0.05, 0.9),
    longInterestUsd,
    shortInterestUsd,
    longInterestInTokens: inTokens(longInterestUsd),
    shortInterestInTokens: inTokens(shortInterestUsd),
    // Pools from nearly empty (where the PnL cap binds) to deep.
    longPoolAmount: zeroOr(() => (r.logBig(10n ** 3n, 10n ** 9n) * 10n ** BigInt(long.decimals) * USD) / long.max, 0.05),
    shortPoolAmount: zeroOr(() => r.logBig(10n ** 3n, 10n ** 9n) * 10n ** BigInt(short.decimals), 0.05),
    positionImpactPoolAmount: zeroOr(() => (r.logBig(1n, 10n ** 7n) * 10n ** BigInt(indexDecimals) * USD) / index.max, 0.2),
    useOpenInterestInTokensForBalance: r.bool(0.5),
    borrowingFactorPerSecondForLongs: r.logBig(1n, 10n ** 22n),
    borrowingFactorPerSecondForShorts: r.logBig(1n, 10n ** 22n),
    fundingFactorPerSecond: zeroOr(() => r.logBig(1n, 10n ** 22n)),
    longsPayShorts: r.bool(),
    virtualInventoryForPositions: r.bool(0.6) ? 0n : (r.bool() ? 1n : -1n) * r.logBig(USD, 10n ** 8n * USD),
  };
  return { ...params, prices: { index, long, short } };
}

export interface RandomPosition {
  sizeInUsd: bigint;
  sizeInTokens: bigint;
  isLong: boolean;
  collateralAmount: bigint;
  collateral: TokenPrices & { isIndexToken: boolean; address: Address };
  pendingImpactAmount: bigint;
  pendingBorrowingFeesUsd: bigint;
  fundingFeeAmount: bigint;
}

/**
 * A position in `m`: long or short, $1 to $100M (sometimes $1B), opened 50% below to 50% above the current price
 * (so in profit or loss), 1.1× to 100× leverage, collateral the long token (the index token in a backed market) or
 * USDC, pending fees from none to a good part of the collateral, a pending impact of either sign or none.
 */
export function randomPosition(r: Prng, m: PricedMarket): RandomPosition {
  const isLong = r.bool();
  const sizeInUsd = r.bool(0.05) ? r.logBig(10n ** 8n * USD, 10n ** 9n * USD) : r.logBig(USD, 10n ** 8n * USD);
  const entry = (m.prices.index.min * BigInt(r.int(50, 150))) / 100n;
  const sizeInTokens = (sizeInUsd * 10n ** BigInt(m.prices.index.decimals)) / entry || 1n;
  const useLong = r.bool();
  const prices = useLong ? m.prices.long : m.prices.short;
  const collateral = { ...prices, isIndexToken: useLong && m.longToken === m.indexToken, address: useLong ? m.longToken : m.shortToken };
  const leverageX100 = BigInt(r.int(110, 10_000));
  const collateralUsd = (sizeInUsd * 100n) / leverageX100;
  const collateralAmount = (collateralUsd * 10n ** BigInt(prices.decimals)) / prices.min || 1n;
  const feeShare = () => (r.bool(0.25) ? 0n : (collateralUsd * BigInt(r.int(0, 300))) / 1_000n);
  const pendingImpactUsd = r.bool(0.4) ? 0n : ((r.bool() ? 1n : -1n) * sizeInUsd * BigInt(r.int(0, 200))) / 100_000n;
  return {
    sizeInUsd,
    sizeInTokens,
    isLong,
    collateralAmount,
    collateral,
    pendingImpactAmount: (pendingImpactUsd * 10n ** BigInt(m.prices.index.decimals)) / m.prices.index.max,
    pendingBorrowingFeesUsd: feeShare(),
    fundingFeeAmount: (feeShare() * 10n ** BigInt(prices.decimals)) / prices.min,
  };
}

/** The SDK's field → DataStore key maps for one market (utils/marketKeysAndConfigs.js): what it reads, and from where. */
export const sdkMarketKeys = load('utils/marketKeysAndConfigs.js') as {
  hashMarketConfigKeys(market: { marketTokenAddress: Address; longTokenAddress: Address; shortTokenAddress: Address; indexTokenAddress: Address }): Record<string, `0x${string}`>;
  hashMarketValuesKeys(market: { marketTokenAddress: Address; longTokenAddress: Address; shortTokenAddress: Address; indexTokenAddress: Address }): Record<string, `0x${string}`>;
};
