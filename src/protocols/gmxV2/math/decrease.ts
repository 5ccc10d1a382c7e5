import { orderMarkPrice, priceAfterImpact } from './acceptablePrice.ts';
import type { ExistingPosition } from './increase.ts';
import { liquidationPrice } from './liquidation.ts';
import type { PricedMarket } from './market.ts';
import { leverageBps, netPriceImpactForDecrease, positionPnlUsd } from './position.ts';
import { cappedPositionPriceImpact, positionFeeUsd, type ReferralRebate } from './priceImpact.ts';
import { abs, applyFactor, BASIS_POINTS, mulDiv, PRECISION, tokensOfUsd, usdOfTokens, type TokenPrices } from './units.ts';

export interface DecreaseInputs {
  position: ExistingPosition;
  collateral: TokenPrices & { isIndexToken: boolean };
  /** The size to close, USD; the whole position when it would leave less than $1, or too little collateral. */
  sizeDeltaUsd: bigint;
  /** Withdraw collateral in proportion, so the remaining position keeps its leverage (GMX UI's default). */
  keepLeverage?: boolean;
  referral?: ReferralRebate;
}

export interface DecreaseQuote {
  isFullClose: boolean;
  indexPrice: bigint;
  sizeDeltaUsd: bigint;
  sizeDeltaInTokens: bigint;
  /** The whole position's PnL at the index price, and the share this decrease realises. */
  estimatedPnlUsd: bigint;
  realizedPnlUsd: bigint;
  /** The close's own impact, the pending impact it realises, their capped total and the excess claimable later. */
  closeImpactUsd: bigint;
  proportionalPendingImpactUsd: bigint;
  totalImpactUsd: bigint;
  priceImpactDiffUsd: bigint;
  balanceWasImproved: boolean;
  impactedPrice: bigint;
  impactedPriceDeltaBps: bigint;
  /** Costs, each as the collateral it takes (valued at the collateral's min price). */
  positionFeeUsd: bigint;
  feeDiscountUsd: bigint;
  borrowingFeeUsd: bigint;
  fundingFeeUsd: bigint;
  /** Collateral withdrawn (besides what pays the costs), and what the trader receives, in the collateral token. */
  collateralDeltaUsd: bigint;
  collateralDeltaAmount: bigint;
  receiveTokenAmount: bigint;
  receiveUsd: bigint;
  /** Costs paid from the remaining collateral (the rest came out of the profit). */
  paidFromCollateralUsd: bigint;
  paidFromCollateralAmount: bigint;
  next: {
    sizeInUsd: bigint;
    collateralUsd: bigint;
    pnlUsd: bigint;
    leverageBps: bigint | undefined;
    liquidationPrice: bigint | undefined;
    pendingImpactUsd: bigint;
  };
}

/**
 * The SDK's getIsFullClose: under $1 left, or a loss that leaves the collateral below the minimum for the
 * leverage and either below MIN_COLLATERAL_USD or the size below MIN_POSITION_SIZE_USD.
 */
function isFullClose(m: PricedMarket, p: ExistingPosition, sizeDeltaUsd: bigint, indexPrice: bigint, remainingCollateralUsd: bigint): boolean {
  if (p.sizeInUsd - sizeDeltaUsd < PRECISION) return true;
  const estimatedPnl = positionPnlUsd(m, p, indexPrice);
  const realizedPnl = mulDiv(estimatedPnl, sizeDeltaUsd, p.sizeInUsd);
  if (realizedPnl >= 0n) return false;
  const remaining = remainingCollateralUsd - realizedPnl;
  const byOi = p.isLong ? m.minCollateralFactorForOpenInterestLong : m.minCollateralFactorForOpenInterestShort;
  const factor = m.minCollateralFactor > byOi ? m.minCollateralFactor : byOi;
  if (remaining >= applyFactor(p.sizeInUsd, factor)) return false;
  return remaining + (estimatedPnl - realizedPnl) < m.minCollateralUsd || p.sizeInUsd - sizeDeltaUsd < m.minPositionSizeUsd;
}

/** Costs are taken from the realised profit first, then from the collateral (DecreasePositionCollateralUtils). */
function payCosts(costUsd: bigint, collateralDecimals: number, collateralPrice: bigint, profitAmount: bigint, collateralAmount: bigint) {
  let cost = tokensOfUsd(costUsd, collateralDecimals, collateralPrice) ?? 0n;
  let output = profitAmount;
  let remaining = collateralAmount;
  let paidFromCollateral = 0n;
  if (cost > 0n && output > 0n) {
    const fromOutput = output > cost ? cost : output;
    output -= fromOutput;
    cost -= fromOutput;
  }
  if (cost > 0n) {
    paidFromCollateral = remaining > cost ? cost : remaining;
    remaining -= paidFromCollateral;
  }
  return { output, remaining, paidFromCollateral };
}

/**
 * A market decrease order's amounts and the position it leaves, as the SDK's getDecreasePositionAmounts and
 * getNextPositionValuesForDecreaseTrade compute them for a market order that swaps no profit (the PnL token is
 * the collateral, or the profit is received in the PnL token): realised PnL, the close's impact with the pending
 * impact, fees taken from profit then collateral, what is received. The acceptable price to sign is
 * `acceptablePriceWithSlippage(impactedPrice, …, isIncrease false)`.
 */
export function decreaseQuote(m: PricedMarket, o: DecreaseInputs): DecreaseQuote {
  const p = o.position;
  const c = o.collateral;
  if (o.sizeDeltaUsd <= 0n || p.sizeInUsd <= 0n || p.sizeInTokens <= 0n) throw new RangeError('a decrease needs an open position and a positive size to close');
  const indexPrice = orderMarkPrice(m.prices.index, false, p.isLong);
  const collateralPrice = c.min;
  const asCollateralCost = (usd: bigint) => usdOfTokens(tokensOfUsd(usd, c.decimals, c.min) ?? 0n, c.decimals, collateralPrice);

  const collateralUsd = usdOfTokens(p.collateralAmount, c.decimals, collateralPrice);
  const keptOut = o.keepLeverage ? mulDiv(o.sizeDeltaUsd, collateralUsd, p.sizeInUsd) : 0n;
  const full = isFullClose(m, p, o.sizeDeltaUsd, indexPrice, collateralUsd - keptOut);
  const sizeDeltaUsd = full ? p.sizeInUsd : o.sizeDeltaUsd;
  const sizeDeltaInTokens = full
    ? p.sizeInTokens
    : p.isLong
      ? (p.sizeInTokens * sizeDeltaUsd + p.sizeInUsd - 1n) / p.sizeInUsd
      : mulDiv(p.sizeInTokens, sizeDeltaUsd, p.sizeInUsd);

  const estimatedPnlUsd = positionPnlUsd(m, p, indexPrice);
  const realizedPnlUsd = mulDiv(estimatedPnlUsd, sizeDeltaInTokens, p.sizeInTokens);

  const close = cappedPositionPriceImpact(m, sizeDeltaUsd, p.isLong, false, { fallbackToZero: true });
  const impacted = priceAfterImpact(indexPrice, sizeDeltaUsd, close.priceImpactUsd, false, p.isLong);
  const impact = netPriceImpactForDecrease(m, p, sizeDeltaUsd, close.priceImpactUsd);

  const profitUsd = (realizedPnlUsd > 0n ? realizedPnlUsd : 0n) + (impact.totalImpactUsd > 0n ? impact.totalImpactUsd : 0n);
  const profitAmount = tokensOfUsd(profitUsd, c.decimals, collateralPrice) ?? 0n;
  const fee = positionFeeUsd(m, sizeDeltaUsd, close.balanceWasImproved, o.referral);
  const positionFee = asCollateralCost(fee.positionFeeUsd);
  const borrowingFeeUsd = asCollateralCost(p.pendingBorrowingFeesUsd);
  const fundingFeeUsd = asCollateralCost(p.pendingFundingFeesUsd);
  const lossUsd = (realizedPnlUsd < 0n ? abs(realizedPnlUsd) : 0n) + (impact.totalImpactUsd < 0n ? abs(impact.totalImpactUsd) : 0n);
  const paid = payCosts(positionFee + borrowingFeeUsd + fundingFeeUsd + lossUsd, c.decimals, collateralPrice, profitAmount, p.collateralAmount);
  const paidFromCollateralUsd = usdOfTokens(paid.paidFromCollateral, c.decimals, collateralPrice);

  let collateralDeltaUsd = 0n;
  let collateralDeltaAmount = 0n;
  let receiveTokenAmount = paid.output;
  if (full) {
    collateralDeltaUsd = collateralUsd;
    collateralDeltaAmount = p.collateralAmount;
    receiveTokenAmount = paid.output + paid.remaining;
  } else if (o.keepLeverage && p.sizeInUsd > 0n && collateralUsd > 0n && paid.remaining > 0n) {
    const remainingUsd = usdOfTokens(paid.remaining, c.decimals, collateralPrice);
    const leverage = leverageBps({ sizeInUsd: p.sizeInUsd, collateralUsd, pendingBorrowingFeesUsd: p.pendingBorrowingFeesUsd, pendingFundingFeesUsd: p.pendingFundingFeesUsd });
    collateralDeltaUsd = leverage !== undefined && leverage !== 0n ? remainingUsd - mulDiv(p.sizeInUsd - sizeDeltaUsd, BASIS_POINTS, leverage) : 0n;
    collateralDeltaAmount = tokensOfUsd(collateralDeltaUsd, c.decimals, collateralPrice)!;
    receiveTokenAmount = paid.output + collateralDeltaAmount;
  }

  const nextSizeInUsd = p.sizeInUsd - sizeDeltaUsd;
  const nextSizeInTokens = p.sizeInTokens - sizeDeltaInTokens;
  const floor0 = (x: bigint) => (x < 0n ? 0n : x);
  const nextCollateralUsd = floor0(p.collateralUsd - collateralDeltaUsd - paidFromCollateralUsd);
  const nextCollateralAmount = floor0(p.collateralAmount - collateralDeltaAmount - paid.paidFromCollateral);

  return {
    isFullClose: full,
    indexPrice,
    sizeDeltaUsd,
    sizeDeltaInTokens,
    estimatedPnlUsd,
    realizedPnlUsd,
    closeImpactUsd: close.priceImpactUsd,
    proportionalPendingImpactUsd: impact.proportionalPendingImpactUsd,
    totalImpactUsd: impact.totalImpactUsd,
    priceImpactDiffUsd: impact.priceImpactDiffUsd,
    balanceWasImproved: close.balanceWasImproved,
    impactedPrice: impacted.price,
    impactedPriceDeltaBps: impacted.deltaBps,
    positionFeeUsd: positionFee,
    feeDiscountUsd: asCollateralCost(fee.discountUsd),
    borrowingFeeUsd,
    fundingFeeUsd,
    collateralDeltaUsd,
    collateralDeltaAmount,
    receiveTokenAmount,
    receiveUsd: usdOfTokens(receiveTokenAmount, c.decimals, collateralPrice),
    paidFromCollateralUsd,
    paidFromCollateralAmount: paid.paidFromCollateral,
    next: {
      sizeInUsd: nextSizeInUsd,
      collateralUsd: nextCollateralUsd,
      pnlUsd: estimatedPnlUsd ? estimatedPnlUsd - realizedPnlUsd : 0n,
      leverageBps: leverageBps({ sizeInUsd: nextSizeInUsd, collateralUsd: nextCollateralUsd, pendingBorrowingFeesUsd: 0n, pendingFundingFeesUsd: 0n }),
      liquidationPrice: liquidationPrice(m, {
        sizeInUsd: nextSizeInUsd,
        sizeInTokens: nextSizeInTokens,
        isLong: p.isLong,
        collateralUsd: nextCollateralUsd,
        collateralAmount: nextCollateralAmount,
        collateralIsIndexToken: c.isIndexToken,
        pendingImpactAmount: p.pendingImpactAmount,
        pendingBorrowingFeesUsd: 0n,
        pendingFundingFeesUsd: 0n,
        referral: o.referral,
      }),
      pendingImpactUsd: p.pendingImpactUsd - impact.proportionalPendingImpactUsd,
    },
  };
}
