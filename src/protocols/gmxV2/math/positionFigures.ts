import { orderMarkPrice } from './acceptablePrice.ts';
import { liquidationPrice } from './liquidation.ts';
import type { PricedMarket } from './market.ts';
import { entryPrice, fundingFeeUsd, leverageBps, netPriceImpactForDecrease, positionNetValueUsd, positionPnlAfterFeesUsd, positionPnlUsd } from './position.ts';
import { cappedPositionPriceImpact, positionFeeUsd, type ReferralRebate } from './priceImpact.ts';
import { usdOfTokens, type TokenPrices } from './units.ts';

/** One position as the Reader's getPositionInfo / getAccountPositionInfoList returns it (the fields used). */
export interface ReaderPosition {
  sizeInUsd: bigint;
  sizeInTokens: bigint;
  collateralAmount: bigint;
  /** position.numbers.pendingImpactAmount */
  pendingImpactAmount: bigint;
  isLong: boolean;
  /** fees.borrowing.borrowingFeeUsd */
  pendingBorrowingFeesUsd: bigint;
  /** fees.funding.fundingFeeAmount, in the collateral token */
  fundingFeeAmount: bigint;
}

export interface PositionFigures {
  entryPrice: bigint | undefined;
  markPrice: bigint;
  collateralUsd: bigint;
  pendingFundingFeesUsd: bigint;
  pendingBorrowingFeesUsd: bigint;
  pnlUsd: bigint;
  closingFeeUsd: bigint;
  /** The impact closing the whole position now would realise, incl. its pending impact, capped. */
  closeImpactUsd: bigint;
  closeImpactDiffUsd: bigint;
  /** The position's pending impact (Position.pendingImpactAmount) valued in USD: realised on decrease. */
  pendingImpactUsd: bigint;
  netValueUsd: bigint;
  pnlAfterFeesUsd: bigint;
  /** Leverage without / with PnL, basis points (10000 = 1×); undefined when the remaining collateral is not positive. */
  leverageBps: bigint | undefined;
  leverageWithPnlBps: bigint | undefined;
  liquidationPrice: bigint | undefined;
}

/**
 * Everything a position view shows, from the Reader's position and the current prices, the way the SDK's positions
 * module derives it: marked at the closing price, the closing fee priced with the close's own balance effect, the
 * close's impact (uncapped negative, capped positive) plus the pending impact. No UI fee (perp-v2 sets no UI fee
 * receiver).
 */
export function positionFigures(
  m: PricedMarket,
  pos: ReaderPosition,
  collateral: TokenPrices & { isIndexToken: boolean },
  referral?: ReferralRebate,
): PositionFigures {
  const markPrice = orderMarkPrice(m.prices.index, false, pos.isLong);
  const pendingFundingFeesUsd = fundingFeeUsd(pos.fundingFeeAmount, collateral);
  const fees = { pendingFundingFeesUsd, pendingBorrowingFeesUsd: pos.pendingBorrowingFeesUsd };

  const closing = pos.sizeInUsd > 0n && markPrice !== 0n
    ? cappedPositionPriceImpact(m, pos.sizeInUsd, pos.isLong, false, { fallbackToZero: true })
    : { priceImpactUsd: 0n, balanceWasImproved: false };
  const closingFeeUsd = positionFeeUsd(m, pos.sizeInUsd, closing.balanceWasImproved, referral).positionFeeUsd;
  const collateralUsd = usdOfTokens(pos.collateralAmount, collateral.decimals, collateral.min);
  const pnlUsd = positionPnlUsd(m, pos, markPrice);
  const impact = netPriceImpactForDecrease(m, pos, pos.sizeInUsd, closing.priceImpactUsd);
  const net = { ...fees, pnlUsd, closingFeeUsd, uiFeeUsd: 0n, totalImpactUsd: impact.totalImpactUsd, priceImpactDiffUsd: impact.priceImpactDiffUsd };

  return {
    entryPrice: entryPrice(pos, m.prices.index.decimals),
    markPrice,
    collateralUsd,
    ...fees,
    pnlUsd,
    closingFeeUsd,
    closeImpactUsd: impact.totalImpactUsd,
    closeImpactDiffUsd: impact.priceImpactDiffUsd,
    pendingImpactUsd: impact.proportionalPendingImpactUsd,
    netValueUsd: positionNetValueUsd({ ...net, collateralUsd }),
    pnlAfterFeesUsd: positionPnlAfterFeesUsd(net),
    leverageBps: leverageBps({ ...fees, sizeInUsd: pos.sizeInUsd, collateralUsd }),
    leverageWithPnlBps: leverageBps({ ...fees, sizeInUsd: pos.sizeInUsd, collateralUsd, pnlUsd }),
    liquidationPrice: liquidationPrice(m, {
      ...pos,
      ...fees,
      collateralUsd,
      collateralIsIndexToken: collateral.isIndexToken,
      referral,
    }),
  };
}
