import { describe, expect, it } from 'vitest';
import { prng, randomMarket, randomPosition, sdk, sdkToken, toSdkMarketInfo, type Prng, type RandomPosition } from '../../../../test/support/gmxSdkOracle.ts';
import type { PricedMarket } from './market.ts';
import { liquidationPrice } from './liquidation.ts';
import { positionFigures } from './positionFigures.ts';

// Compared exactly with the SDK's getLiquidationPrice, and positionFigures with the SDK's own positions module
// pipeline (modules/positions/positions.js, getPositionsInfo) rebuilt from its utilities on the same inputs.
const CASES = 3_000;

const referralOf = (r: Prng) => (r.bool(0.3) ? { totalRebateFactor: r.factor(0, 0.2), discountFactor: r.factor(0, 1) } : undefined);
const usd = (amount: bigint, p: { decimals: number; min: bigint }) => (amount * p.min) / 10n ** BigInt(p.decimals);

function sdkCollateral(p: RandomPosition) {
  return sdkToken(p.collateral.address, p.collateral.isIndexToken ? 'INDEX' : 'COLLATERAL', p.collateral);
}

describe('liquidation price, against the SDK', () => {
  it('matches getLiquidationPrice: long and short, index-token or stablecoin collateral, current or max impact, with fees and pending impact', () => {
    const r = prng(20);
    const seen = { sameLong: 0, sameShort: 0, otherLong: 0, otherShort: 0, undefined: 0, maxImpact: 0 };
    for (let i = 0; i < CASES; i++) {
      const m = randomMarket(r);
      const p = randomPosition(r, m);
      const referral = referralOf(r);
      const useMaxPriceImpact = r.bool(0.2);
      const pendingFundingFeesUsd = usd(p.fundingFeeAmount, p.collateral);
      const collateralUsd = usd(p.collateralAmount, p.collateral);
      const ours = liquidationPrice(m, {
        ...p,
        collateralUsd,
        pendingFundingFeesUsd,
        collateralIsIndexToken: p.collateral.isIndexToken,
        referral,
        useMaxPriceImpact,
      });
      const theirs = sdk.positions.getLiquidationPrice({
        marketInfo: toSdkMarketInfo(m),
        collateralToken: sdkCollateral(p),
        sizeInUsd: p.sizeInUsd,
        sizeInTokens: p.sizeInTokens,
        collateralUsd,
        collateralAmount: p.collateralAmount,
        pendingImpactAmount: p.pendingImpactAmount,
        userReferralInfo: referral,
        minCollateralUsd: m.minCollateralUsd,
        pendingBorrowingFeesUsd: p.pendingBorrowingFeesUsd,
        pendingFundingFeesUsd,
        isLong: p.isLong,
        useMaxPriceImpact,
      });
      expect(ours, `case ${i}`).toBe(theirs);
      if (ours === undefined) seen.undefined++;
      else seen[`${p.collateral.isIndexToken ? 'same' : 'other'}${p.isLong ? 'Long' : 'Short'}`]++;
      if (useMaxPriceImpact) seen.maxImpact++;
    }
    expect(Math.min(...Object.values(seen))).toBeGreaterThan(50);
  });

  it('liquidates a long at a lower price than it is marked at, and a short at a higher one (a sanity check beside the SDK)', () => {
    const r = prng(21);
    for (let i = 0; i < 500; i++) {
      const m = randomMarket(r);
      const drawn = randomPosition(r, m);
      // Opened at the current price at 2× to 10× with stablecoin collateral, at least $1000 (above MIN_COLLATERAL_USD): far from liquidation.
      const p = { ...drawn, sizeInUsd: drawn.sizeInUsd < 1000n * 10n ** 30n ? 1000n * 10n ** 30n : drawn.sizeInUsd, pendingBorrowingFeesUsd: 0n, fundingFeeAmount: 0n, pendingImpactAmount: 0n };
      const sizeInTokens = (p.sizeInUsd * 10n ** BigInt(m.prices.index.decimals)) / m.prices.index.min;
      const collateralUsd = p.sizeInUsd / BigInt(r.int(2, 10));
      const price = liquidationPrice(m, {
        ...p,
        sizeInTokens,
        collateralUsd,
        collateralAmount: 0n,
        pendingFundingFeesUsd: 0n,
        collateralIsIndexToken: false,
      });
      if (p.isLong) expect(price === undefined || price < m.prices.index.min, `case ${i}`).toBe(true);
      else expect(price! > m.prices.index.max, `case ${i}`).toBe(true);
    }
  });
});

/** The SDK's getPositionsInfo, for one position, with its own utilities (no UI fee: the SDK drops it without a referral). */
function sdkPositionFigures(m: PricedMarket, p: RandomPosition, referral: ReturnType<typeof referralOf>) {
  const marketInfo = toSdkMarketInfo(m);
  const collateralToken = sdkCollateral(p);
  const markPrice = sdk.prices.getMarkPrice({ prices: marketInfo.indexToken.prices, isLong: p.isLong, isIncrease: false });
  const pendingFundingFeesUsd = (p.fundingFeeAmount * collateralToken.prices.minPrice) / 10n ** BigInt(collateralToken.decimals);
  const close = sdk.prices.getAcceptablePriceInfo({ marketInfo, isIncrease: false, isLimit: false, isLong: p.isLong, indexPrice: markPrice, sizeDeltaUsd: p.sizeInUsd });
  const closingFeeUsd = sdk.fees.getPositionFee(marketInfo, p.sizeInUsd, close.balanceWasImproved, referral, 0n).positionFeeUsd;
  const collateralUsd = (p.collateralAmount * collateralToken.prices.minPrice) / 10n ** BigInt(collateralToken.decimals);
  const pnl = sdk.positions.getPositionPnlUsd({ marketInfo, sizeInUsd: p.sizeInUsd, sizeInTokens: p.sizeInTokens, markPrice, isLong: p.isLong });
  const impact = sdk.positions.getNetPriceImpactDeltaUsdForDecrease({
    marketInfo,
    sizeInUsd: p.sizeInUsd,
    pendingImpactAmount: p.pendingImpactAmount,
    sizeDeltaUsd: p.sizeInUsd,
    priceImpactDeltaUsd: close.priceImpactDeltaUsd,
  });
  const fees = { pendingBorrowingFeesUsd: p.pendingBorrowingFeesUsd, pendingFundingFeesUsd };
  const net = { ...fees, pnl, closingFeeUsd, uiFeeUsd: 0n, totalPendingImpactDeltaUsd: impact.totalImpactDeltaUsd, priceImpactDiffUsd: impact.priceImpactDiffUsd };
  return {
    entryPrice: sdk.positions.getEntryPrice({ sizeInUsd: p.sizeInUsd, sizeInTokens: p.sizeInTokens, indexToken: marketInfo.indexToken }),
    markPrice,
    collateralUsd,
    ...fees,
    pnlUsd: pnl,
    closingFeeUsd,
    closeImpactUsd: impact.totalImpactDeltaUsd,
    closeImpactDiffUsd: impact.priceImpactDiffUsd,
    pendingImpactUsd: impact.proportionalPendingImpactDeltaUsd,
    netValueUsd: sdk.positions.getPositionNetValue({ ...net, collateralUsd }),
    pnlAfterFeesUsd: sdk.positions.getPositionPnlAfterFees(net),
    leverageBps: sdk.positions.getLeverage({ ...fees, sizeInUsd: p.sizeInUsd, collateralUsd, pnl: undefined }),
    leverageWithPnlBps: sdk.positions.getLeverage({ ...fees, sizeInUsd: p.sizeInUsd, collateralUsd, pnl }),
    liquidationPrice: sdk.positions.getLiquidationPrice({
      marketInfo,
      collateralToken,
      sizeInUsd: p.sizeInUsd,
      sizeInTokens: p.sizeInTokens,
      collateralUsd,
      collateralAmount: p.collateralAmount,
      pendingImpactAmount: p.pendingImpactAmount,
      userReferralInfo: referral,
      minCollateralUsd: m.minCollateralUsd,
      ...fees,
      isLong: p.isLong,
    }),
  };
}

describe('a position view from the Reader, against the SDK positions module', () => {
  it('positionFigures matches the SDK pipeline field by field', () => {
    const r = prng(22);
    for (let i = 0; i < CASES; i++) {
      const m = randomMarket(r);
      const p = randomPosition(r, m);
      const referral = referralOf(r);
      const ours = positionFigures(m, p, p.collateral, referral);
      expect(ours, `case ${i}`).toEqual(sdkPositionFigures(m, p, referral));
    }
  });
});
