import { orderMarkPrice, priceAfterImpact } from './acceptablePrice.ts';
import { liquidationPrice } from './liquidation.ts';
import type { PricedMarket } from './market.ts';
import { entryPrice, leverageBps, priceImpactDiffUsd } from './position.ts';
import type { PositionFigures, ReaderPosition } from './positionFigures.ts';
import { capPositionImpactByImpactPool, capPositionImpactByMaxFactor, cappedPositionPriceImpact, positionFeeUsd, positionPriceImpact, type ReferralRebate } from './priceImpact.ts';
import { BASIS_POINTS, mulDiv, tokensOfUsd, usdOfTokens, type TokenPrices } from './units.ts';

/** An open position being increased: the Reader's values and the figures derived from them (positionFigures). */
export type ExistingPosition = ReaderPosition & Pick<PositionFigures, 'collateralUsd' | 'pendingFundingFeesUsd' | 'pendingImpactUsd'>;

export interface IncreaseInputs {
  isLong: boolean;
  /** The position's collateral token, paid in as is (no swap path). */
  collateral: TokenPrices & { isIndexToken: boolean };
  collateralAmount: bigint;
  /**
   * How the size is set: `leverageBps` sizes it from the collateral after the position fee (10000 = 1×); or
   * `indexTokenAmount`, a size in index tokens at the mark price, with the leverage following from the collateral.
   */
  size: { leverageBps: bigint } | { indexTokenAmount: bigint };
  existing?: ExistingPosition;
  referral?: ReferralRebate;
}

export interface IncreaseQuote {
  /** The index price the order is marked at (max for a long, min for a short). */
  indexPrice: bigint;
  sizeDeltaUsd: bigint;
  sizeDeltaInTokens: bigint;
  /** Collateral added after the position fee and the existing position's pending fees, USD and amount. */
  collateralDeltaUsd: bigint;
  collateralDeltaAmount: bigint;
  positionFeeUsd: bigint;
  feeDiscountUsd: bigint;
  /** Leverage of the order alone, bps; undefined when its collateral does not cover the fees. */
  leverageBps: bigint | undefined;
  /** The order's price impact (positive capped), the part of a negative one beyond the cap, the price they imply. */
  priceImpactUsd: bigint;
  priceImpactDiffUsd: bigint;
  impactedPrice: bigint;
  impactedPriceDeltaBps: bigint;
  next: {
    sizeInUsd: bigint;
    collateralUsd: bigint;
    entryPrice: bigint;
    /** Without PnL, and without pending fees (the order pays them). */
    leverageBps: bigint | undefined;
    liquidationPrice: bigint | undefined;
    /** The position's pending impact after the order, capped as a decrease would realise it. */
    pendingImpactUsd: bigint;
    priceImpactDiffUsd: bigint;
  };
}

/**
 * A market increase order's amounts and the position it leaves, as the SDK's getIncreasePositionAmounts
 * ("leverageByCollateral" or "independent", no swap, no UI fee) and getNextPositionValuesForIncreaseTrade compute
 * them. The acceptable price to sign is `acceptablePriceWithSlippage(impactedPrice, …)`.
 */
export function increaseQuote(m: PricedMarket, o: IncreaseInputs): IncreaseQuote {
  const index = m.prices.index;
  const indexPrice = orderMarkPrice(index, true, o.isLong);
  const collateralPrice = o.collateral.min;
  const pendingFeesUsd = (o.existing?.pendingBorrowingFeesUsd ?? 0n) + (o.existing?.pendingFundingFeesUsd ?? 0n);
  const baseCollateralUsd = usdOfTokens(o.collateralAmount, o.collateral.decimals, collateralPrice);

  let sizeDeltaUsd = 0n;
  let fee = { positionFeeUsd: 0n, discountUsd: 0n };
  let collateralDeltaUsd = 0n;
  let collateralDeltaAmount = 0n;
  let leverage: bigint | undefined = 0n;
  if (indexPrice > 0n && collateralPrice > 0n) {
    if ('leverageBps' in o.size) {
      if (o.collateralAmount > 0n) {
        // The fee is on the size, the size on the collateral after the fee: one fixed-point step, as the SDK takes it.
        const baseSizeUsd = mulDiv(baseCollateralUsd, o.size.leverageBps, BASIS_POINTS);
        const { balanceWasImproved } = positionPriceImpact(m, baseSizeUsd, o.isLong);
        const baseFee = positionFeeUsd(m, baseSizeUsd, balanceWasImproved, o.referral).positionFeeUsd;
        sizeDeltaUsd = mulDiv(baseCollateralUsd - baseFee, o.size.leverageBps, BASIS_POINTS);
        fee = positionFeeUsd(m, sizeDeltaUsd, balanceWasImproved, o.referral);
        collateralDeltaUsd = baseCollateralUsd - fee.positionFeeUsd - pendingFeesUsd;
        collateralDeltaAmount = tokensOfUsd(collateralDeltaUsd, o.collateral.decimals, collateralPrice)!;
        leverage = o.size.leverageBps;
      }
    } else {
      if (o.size.indexTokenAmount > 0n) {
        sizeDeltaUsd = usdOfTokens(o.size.indexTokenAmount, index.decimals, indexPrice);
        const { balanceWasImproved } = positionPriceImpact(m, sizeDeltaUsd, o.isLong);
        fee = positionFeeUsd(m, sizeDeltaUsd, balanceWasImproved, o.referral);
      }
      if (o.collateralAmount > 0n) {
        collateralDeltaUsd = baseCollateralUsd - fee.positionFeeUsd - pendingFeesUsd;
        collateralDeltaAmount = tokensOfUsd(collateralDeltaUsd, o.collateral.decimals, collateralPrice)!;
      }
      leverage = leverageBps({ sizeInUsd: sizeDeltaUsd, collateralUsd: collateralDeltaUsd, pnlUsd: 0n, pendingFundingFeesUsd: 0n, pendingBorrowingFeesUsd: 0n });
    }
  }

  let priceImpactUsd = 0n;
  let impacted = { price: 0n, deltaBps: 0n };
  if (sizeDeltaUsd > 0n && indexPrice !== 0n) {
    priceImpactUsd = cappedPositionPriceImpact(m, sizeDeltaUsd, o.isLong, true).priceImpactUsd;
    impacted = priceAfterImpact(indexPrice, sizeDeltaUsd, priceImpactUsd, true, o.isLong);
  }
  const sizeDeltaInTokens = tokensOfUsd(sizeDeltaUsd, index.decimals, indexPrice) ?? 0n;

  const e = o.existing;
  const next = {
    sizeInUsd: (e?.sizeInUsd ?? 0n) + sizeDeltaUsd,
    sizeInTokens: (e?.sizeInTokens ?? 0n) + sizeDeltaInTokens,
    collateralUsd: (e?.collateralUsd ?? 0n) + collateralDeltaUsd,
    collateralAmount: (e?.collateralAmount ?? 0n) + collateralDeltaAmount,
  };
  let nextPendingImpactUsd = (e?.pendingImpactUsd ?? 0n) + priceImpactUsd;
  const nextImpactDiffUsd = priceImpactDiffUsd(m, nextPendingImpactUsd, next.sizeInUsd);
  if (nextPendingImpactUsd > 0n) nextPendingImpactUsd = capPositionImpactByMaxFactor(m, next.sizeInUsd, nextPendingImpactUsd);
  nextPendingImpactUsd = capPositionImpactByImpactPool(m, nextPendingImpactUsd);

  return {
    indexPrice,
    sizeDeltaUsd,
    sizeDeltaInTokens,
    collateralDeltaUsd,
    collateralDeltaAmount,
    positionFeeUsd: fee.positionFeeUsd,
    feeDiscountUsd: fee.discountUsd,
    leverageBps: leverage,
    priceImpactUsd,
    priceImpactDiffUsd: priceImpactDiffUsd(m, priceImpactUsd, sizeDeltaUsd),
    impactedPrice: impacted.price,
    impactedPriceDeltaBps: impacted.deltaBps,
    next: {
      sizeInUsd: next.sizeInUsd,
      collateralUsd: next.collateralUsd,
      entryPrice: entryPrice(next, index.decimals) ?? indexPrice,
      leverageBps: leverageBps({ sizeInUsd: next.sizeInUsd, collateralUsd: next.collateralUsd, pendingFundingFeesUsd: 0n, pendingBorrowingFeesUsd: 0n }),
      liquidationPrice: liquidationPrice(m, {
        ...next,
        isLong: o.isLong,
        pendingFundingFeesUsd: 0n,
        pendingBorrowingFeesUsd: 0n,
        pendingImpactAmount: e?.pendingImpactAmount ?? 0n,
        collateralIsIndexToken: o.collateral.isIndexToken,
        referral: o.referral,
      }),
      pendingImpactUsd: nextPendingImpactUsd,
      priceImpactDiffUsd: nextImpactDiffUsd,
    },
  };
}
