import { openInterestForBalanceUsd, type MarketParams, type PricedMarket } from './market.ts';
import { abs, applyFactor, PRECISION, usdOfTokens } from './units.ts';

/**
 * factor × diff^exponent, diff and exponent 30-decimal. GMX's contracts take the power in 18-decimal fixed point
 * (PRBMath, and 0 below $1 of imbalance); the SDK takes it in float64 and rounds, and this follows the SDK, so a
 * quote agrees with GMX's own UI to the wei. The two differ by float64's precision (~1e-15 relative): negligible
 * beside the acceptable-price slippage every order carries.
 */
export function applyImpactFactor(diffUsd: bigint, factor: bigint, exponentFactor: bigint): bigint {
  const diff = Number(diffUsd) / 1e30;
  const exponent = Number(exponentFactor) / 1e30;
  const powered = BigInt(Math.round(diff ** exponent * 1e30));
  return (powered * factor) / PRECISION;
}

export interface ImpactFactors {
  factorPositive: bigint;
  factorNegative: bigint;
  exponentFactorPositive: bigint;
  exponentFactorNegative: bigint;
}

export interface PriceImpact {
  /** Positive: the trader gains; negative: pays. 30-decimal USD. */
  priceImpactUsd: bigint;
  /** Whether the trade narrowed the long/short imbalance (it then pays the lower position fee). */
  balanceWasImproved: boolean;
}

/**
 * The impact of moving the balance from (currentLong, currentShort) to (nextLong, nextShort) (PricingUtils): same
 * side, the difference of the two imbalances' impacts; crossing over, the positive impact of closing the old
 * imbalance less the negative impact of opening the new. A side going negative throws, or gives 0 when
 * `fallbackToZero` (the SDK's choice for decreases, whose OI may lag).
 */
export function priceImpactUsdOfBalance(
  balance: { currentLongUsd: bigint; currentShortUsd: bigint; nextLongUsd: bigint; nextShortUsd: bigint },
  f: ImpactFactors,
  fallbackToZero = false,
): PriceImpact {
  const { currentLongUsd, currentShortUsd, nextLongUsd, nextShortUsd } = balance;
  if (nextLongUsd < 0n || nextShortUsd < 0n) {
    if (fallbackToZero) return { priceImpactUsd: 0n, balanceWasImproved: false };
    throw new RangeError('the trade would take one side of the open interest below zero');
  }
  const currentDiff = abs(currentLongUsd - currentShortUsd);
  const nextDiff = abs(nextLongUsd - nextShortUsd);
  const balanceWasImproved = nextDiff < currentDiff;
  if (currentLongUsd < currentShortUsd === nextLongUsd < nextShortUsd) {
    const factor = balanceWasImproved ? f.factorPositive : f.factorNegative;
    const exponent = balanceWasImproved ? f.exponentFactorPositive : f.exponentFactorNegative;
    const delta = abs(applyImpactFactor(currentDiff, factor, exponent) - applyImpactFactor(nextDiff, factor, exponent));
    return { priceImpactUsd: balanceWasImproved ? delta : -delta, balanceWasImproved };
  }
  const positive = applyImpactFactor(currentDiff, f.factorPositive, f.exponentFactorPositive);
  const negative = applyImpactFactor(nextDiff, f.factorNegative, f.exponentFactorNegative);
  const delta = abs(positive - negative);
  return { priceImpactUsd: positive > negative ? delta : -delta, balanceWasImproved };
}

const positionImpactFactors = (m: MarketParams): ImpactFactors => ({
  factorPositive: m.positionImpactFactorPositive,
  factorNegative: m.positionImpactFactorNegative,
  exponentFactorPositive: m.positionImpactExponentFactorPositive,
  exponentFactorNegative: m.positionImpactExponentFactorNegative,
});

const withDelta = (long: bigint, short: bigint, deltaUsd: bigint, isLong: boolean) => ({
  currentLongUsd: long,
  currentShortUsd: short,
  nextLongUsd: isLong ? long + deltaUsd : long,
  nextShortUsd: isLong ? short : short + deltaUsd,
});

/**
 * The price impact of changing one side's open interest by `sizeDeltaUsd` (positive to open, negative to close),
 * uncapped (PositionPricingUtils.getPriceImpactUsd): a negative impact is the worse of the market's own and its
 * virtual inventory's (markets sharing the index token).
 */
export function positionPriceImpact(m: PricedMarket, sizeDeltaUsd: bigint, isLong: boolean, opts: { fallbackToZero?: boolean } = {}): PriceImpact {
  const factors = positionImpactFactors(m);
  const balance = withDelta(openInterestForBalanceUsd(m, true), openInterestForBalanceUsd(m, false), sizeDeltaUsd, isLong);
  const own = priceImpactUsdOfBalance(balance, factors, opts.fallbackToZero);
  if (own.priceImpactUsd > 0n || m.virtualInventoryForPositions === 0n) return own;

  // Virtual inventory > 0: shorts outweigh longs. A decrease offsets both sides first so neither goes negative.
  let long = m.virtualInventoryForPositions > 0n ? 0n : -m.virtualInventoryForPositions;
  let short = m.virtualInventoryForPositions > 0n ? m.virtualInventoryForPositions : 0n;
  if (sizeDeltaUsd < 0n) {
    long += -sizeDeltaUsd;
    short += -sizeDeltaUsd;
  }
  const virtual = priceImpactUsdOfBalance(withDelta(long, short, sizeDeltaUsd, isLong), factors, opts.fallbackToZero);
  return virtual.priceImpactUsd < own.priceImpactUsd ? { priceImpactUsd: virtual.priceImpactUsd, balanceWasImproved: own.balanceWasImproved } : own;
}

/** The max positive / negative impact factors; a positive cap above the negative one is lowered to it. */
export function maxPositionImpactFactors(m: MarketParams): { maxPositive: bigint; maxNegative: bigint } {
  const maxNegative = m.maxPositionImpactFactorNegative;
  const maxPositive = m.maxPositionImpactFactorPositive > maxNegative ? maxNegative : m.maxPositionImpactFactorPositive;
  return { maxPositive, maxNegative };
}

/** An impact capped at MAX_POSITION_IMPACT_FACTOR (positive or negative) of the size delta. */
export function capPositionImpactByMaxFactor(m: MarketParams, sizeDeltaUsd: bigint, priceImpactUsd: bigint): bigint {
  const { maxPositive, maxNegative } = maxPositionImpactFactors(m);
  const cap = applyFactor(abs(sizeDeltaUsd), priceImpactUsd > 0n ? maxPositive : maxNegative);
  if (abs(priceImpactUsd) <= cap) return priceImpactUsd;
  return priceImpactUsd > 0n ? cap : -cap;
}

/** A positive impact capped at what the position impact pool holds (valued at the index token's min price). */
export function capPositionImpactByImpactPool(m: PricedMarket, priceImpactUsd: bigint): bigint {
  if (priceImpactUsd < 0n) return priceImpactUsd;
  const poolUsd = usdOfTokens(m.positionImpactPoolAmount, m.prices.index.decimals, m.prices.index.min);
  return priceImpactUsd > poolUsd ? poolUsd : priceImpactUsd;
}

/**
 * The impact an order of `sizeDeltaUsd` (always positive here) shows, as the SDK's getCappedPositionImpactUsd: a
 * positive impact capped by the max factor; a negative one uncapped unless `capNegative`.
 */
export function cappedPositionPriceImpact(
  m: PricedMarket,
  sizeDeltaUsd: bigint,
  isLong: boolean,
  isIncrease: boolean,
  opts: { fallbackToZero?: boolean; capNegative?: boolean } = {},
): PriceImpact {
  const delta = isIncrease ? sizeDeltaUsd : -sizeDeltaUsd;
  const impact = positionPriceImpact(m, delta, isLong, opts);
  if (impact.priceImpactUsd < 0n && !opts.capNegative) return impact;
  return { priceImpactUsd: capPositionImpactByMaxFactor(m, delta, impact.priceImpactUsd), balanceWasImproved: impact.balanceWasImproved };
}

/** A referral's share of a position fee (ReferralStorage tiers): the total rebate, of which the trader's discount. */
export interface ReferralRebate {
  totalRebateFactor: bigint;
  discountFactor: bigint;
}

export interface PositionFee {
  positionFeeUsd: bigint;
  discountUsd: bigint;
  totalRebateUsd: bigint;
  uiFeeUsd: bigint;
}

/**
 * The position fee on a size delta (PositionPricingUtils.getPositionFees): the lower factor when the order improves
 * the balance, less the trader's referral discount; and the UI fee at `uiFeeFactor` (separate, not deducted).
 */
export function positionFeeUsd(m: MarketParams, sizeDeltaUsd: bigint, balanceWasImproved: boolean, referral?: ReferralRebate, uiFeeFactor = 0n): PositionFee {
  const factor = balanceWasImproved ? m.positionFeeFactorForBalanceWasImproved : m.positionFeeFactorForBalanceWasNotImproved;
  const fee = applyFactor(sizeDeltaUsd, factor);
  const uiFeeUsd = applyFactor(sizeDeltaUsd, uiFeeFactor);
  if (!referral) return { positionFeeUsd: fee, discountUsd: 0n, totalRebateUsd: 0n, uiFeeUsd };
  const totalRebateUsd = applyFactor(fee, referral.totalRebateFactor);
  const discountUsd = applyFactor(totalRebateUsd, referral.discountFactor);
  return { positionFeeUsd: fee - discountUsd, discountUsd, totalRebateUsd, uiFeeUsd };
}
