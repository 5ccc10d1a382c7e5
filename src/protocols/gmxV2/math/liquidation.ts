import type { PricedMarket } from './market.ts';
import { pendingFeesUsd, type PendingFees, type PositionSize } from './position.ts';
import { capPositionImpactByMaxFactor, positionFeeUsd, positionPriceImpact, type ReferralRebate } from './priceImpact.ts';
import { applyFactor, pow10, usdOfTokens } from './units.ts';

export interface LiquidationInputs extends PositionSize, PendingFees {
  /** The collateral's USD value at its min price, and its amount (smallest units). */
  collateralUsd: bigint;
  collateralAmount: bigint;
  /**
   * Whether the collateral is the index token (or its equivalent: the wrapped native token, a synthetic of the
   * same symbol): its value then moves with the price, which the formula solves for.
   */
  collateralIsIndexToken: boolean;
  /** Position.pendingImpactAmount: impact deferred to the decrease, in index tokens, signed. */
  pendingImpactAmount: bigint;
  referral?: ReferralRebate;
  /** Assume the worst impact a liquidation can take (MAX_POSITION_IMPACT_FACTOR_FOR_LIQUIDATIONS) instead of the current one. */
  useMaxPriceImpact?: boolean;
}

/**
 * The index price at which the position becomes liquidatable, USD per whole index token (30 decimals), as the
 * SDK's getLiquidationPrice computes it: the remaining collateral (collateral − pending fees − the closing fee +
 * the closing impact, never positive, never below the liquidation cap) equals the larger of MIN_COLLATERAL_USD and
 * MIN_COLLATERAL_FACTOR_FOR_LIQUIDATION × size. Undefined when the position is empty or no positive price does it.
 *
 * The SDK's closed form uses MIN_COLLATERAL_FACTOR_FOR_LIQUIDATION alone (not the open-interest multiplier,
 * which GMX applies when a position is increased: minCollateralFactorForPosition) and the closing fee of a close
 * that does not improve the balance; the keeper's check (PositionUtils.isPositionLiquidatable) evaluates the
 * actual close at the actual prices, so this is the SDK's estimate, followed here so the two agree. The price
 * divides before it multiplies by 10^decimals, as the SDK's does (it is a multiple of 10^decimals).
 */
export function liquidationPrice(m: PricedMarket, p: LiquidationInputs): bigint | undefined {
  if (p.sizeInUsd <= 0n || p.sizeInTokens <= 0n) return undefined;
  const index = m.prices.index;
  const closingFeeUsd = positionFeeUsd(m, p.sizeInUsd, false, p.referral).positionFeeUsd;
  const pendingUsd = pendingFeesUsd(p);
  const totalFeesUsd = pendingUsd + closingFeeUsd;
  const maxNegativeImpactUsd = -applyFactor(p.sizeInUsd, m.maxPositionImpactFactorForLiquidations);

  let impactUsd: bigint;
  if (p.useMaxPriceImpact) {
    impactUsd = maxNegativeImpactUsd;
  } else {
    impactUsd = positionPriceImpact(m, -p.sizeInUsd, p.isLong, { fallbackToZero: true }).priceImpactUsd;
    if (impactUsd > 0n) impactUsd = capPositionImpactByMaxFactor(m, p.sizeInUsd, impactUsd);
    impactUsd += usdOfTokens(p.pendingImpactAmount, index.decimals, p.pendingImpactAmount > 0n ? index.min : index.max);
    // A positive impact is not counted on (it may be gone by then); a negative one never beyond the liquidation cap.
    if (impactUsd > 0n) impactUsd = 0n;
    else if (impactUsd < maxNegativeImpactUsd) impactUsd = maxNegativeImpactUsd;
  }

  let minCollateralUsd = applyFactor(p.sizeInUsd, m.minCollateralFactorForLiquidation);
  if (minCollateralUsd < m.minCollateralUsd) minCollateralUsd = m.minCollateralUsd;

  const unit = pow10(index.decimals);
  let price: bigint;
  if (p.collateralIsIndexToken) {
    // The collateral is worth collateralAmount × price too: solve size + ... = (sizeInTokens ± collateralAmount) × price.
    const tokens = p.isLong ? p.sizeInTokens + p.collateralAmount : p.sizeInTokens - p.collateralAmount;
    if (tokens === 0n) return undefined;
    const usd = p.isLong
      ? p.sizeInUsd + minCollateralUsd - impactUsd + totalFeesUsd
      : p.sizeInUsd - minCollateralUsd + impactUsd - totalFeesUsd;
    price = (usd / tokens) * unit;
  } else {
    const remainingCollateralUsd = p.collateralUsd + impactUsd - pendingUsd - closingFeeUsd;
    price = p.isLong
      ? ((minCollateralUsd - remainingCollateralUsd + p.sizeInUsd) / p.sizeInTokens) * unit
      : ((minCollateralUsd - remainingCollateralUsd - p.sizeInUsd) / -p.sizeInTokens) * unit;
  }
  return price > 0n ? price : undefined;
}
