import { describe, expect, it } from 'vitest';
import { prng, randomMarket, randomPosition, sdk, sdkToken, toSdkMarketInfo } from '../../../../test/support/gmxSdkOracle.ts';
import { decreaseQuote } from './decrease.ts';
import { positionFigures } from './positionFigures.ts';

// Compared exactly with the SDK's utils/trade/decrease.js: getDecreasePositionAmounts (market order, receiving the
// collateral when it is the PnL token, else the PnL token: no profit swap) then getNextPositionValuesForDecreaseTrade.
const CASES = 2_000;

describe('decrease quote, against the SDK', () => {
  it('matches getDecreasePositionAmounts and getNextPositionValuesForDecreaseTrade: partial and full closes, keeping leverage or not, profit and loss', () => {
    const r = prng(60);
    const seen = { full: 0, partial: 0, keepLeverage: 0, profit: 0, loss: 0, paidFromCollateral: 0, forcedFull: 0 };
    for (let i = 0; i < CASES; i++) {
      const m = randomMarket(r);
      const p = randomPosition(r, m);
      const info = toSdkMarketInfo(m);
      const collateralToken = sdkToken(p.collateral.address, p.collateral.isIndexToken ? 'INDEX' : 'COLLATERAL', p.collateral);
      const pnlToken = p.isLong ? info.longToken : info.shortToken;
      const receiveToken = pnlToken.address === collateralToken.address ? collateralToken : pnlToken;
      const referral = r.bool(0.3) ? { totalRebateFactor: r.factor(0, 0.2), discountFactor: r.factor(0, 1) } : undefined;
      const position = { ...p, ...positionFigures(m, p, p.collateral, referral) };
      const sizeDeltaUsd = r.bool(0.2) ? p.sizeInUsd : r.bool(0.1) ? p.sizeInUsd - r.logBig(1n, 10n ** 30n) : (p.sizeInUsd * BigInt(r.int(1, 99))) / 100n || 1n;
      const keepLeverage = r.bool();

      const ours = decreaseQuote(m, { position, collateral: p.collateral, sizeDeltaUsd, keepLeverage, referral });

      const sdkPosition = { ...position, marketInfo: info };
      const a = sdk.decrease.getDecreasePositionAmounts({
        marketInfo: info,
        collateralToken,
        receiveToken,
        isLong: p.isLong,
        position: sdkPosition,
        closeSizeUsd: sizeDeltaUsd,
        keepLeverage,
        userReferralInfo: referral,
        minCollateralUsd: m.minCollateralUsd,
        minPositionSizeUsd: m.minPositionSizeUsd,
        uiFeeFactor: 0n,
      }) as Record<string, bigint>;
      const n = sdk.decrease.getNextPositionValuesForDecreaseTrade({
        existingPosition: sdkPosition,
        marketInfo: info,
        collateralToken,
        sizeDeltaUsd: a.sizeDeltaUsd,
        sizeDeltaInTokens: a.sizeDeltaInTokens,
        realizedPnl: a.realizedPnl,
        estimatedPnl: a.estimatedPnl,
        collateralDeltaUsd: a.collateralDeltaUsd,
        collateralDeltaAmount: a.collateralDeltaAmount,
        payedRemainingCollateralUsd: a.payedRemainingCollateralUsd,
        payedRemainingCollateralAmount: a.payedRemainingCollateralAmount,
        showPnlInLeverage: false,
        proportionalPendingImpactDeltaUsd: a.proportionalPendingImpactDeltaUsd,
        isLong: p.isLong,
        minCollateralUsd: m.minCollateralUsd,
        userReferralInfo: referral,
      }) as Record<string, bigint | undefined>;
      expect(a.swapProfitFeeUsd).toBe(0n);

      expect(ours, `case ${i}`).toEqual({
        isFullClose: a.isFullClose,
        indexPrice: a.indexPrice,
        sizeDeltaUsd: a.sizeDeltaUsd,
        sizeDeltaInTokens: a.sizeDeltaInTokens,
        estimatedPnlUsd: a.estimatedPnl,
        realizedPnlUsd: a.realizedPnl,
        closeImpactUsd: a.closePriceImpactDeltaUsd,
        proportionalPendingImpactUsd: a.proportionalPendingImpactDeltaUsd,
        totalImpactUsd: a.totalPendingImpactDeltaUsd,
        priceImpactDiffUsd: a.priceImpactDiffUsd,
        balanceWasImproved: a.balanceWasImproved,
        impactedPrice: a.acceptablePrice,
        impactedPriceDeltaBps: a.acceptablePriceDeltaBps,
        positionFeeUsd: a.positionFeeUsd,
        feeDiscountUsd: a.feeDiscountUsd,
        borrowingFeeUsd: a.borrowingFeeUsd,
        fundingFeeUsd: a.fundingFeeUsd,
        collateralDeltaUsd: a.collateralDeltaUsd,
        collateralDeltaAmount: a.collateralDeltaAmount,
        receiveTokenAmount: a.receiveTokenAmount,
        receiveUsd: a.receiveUsd,
        paidFromCollateralUsd: a.payedRemainingCollateralUsd,
        paidFromCollateralAmount: a.payedRemainingCollateralAmount,
        next: {
          sizeInUsd: n.nextSizeUsd,
          collateralUsd: n.nextCollateralUsd,
          pnlUsd: n.nextPnl,
          leverageBps: n.nextLeverage,
          liquidationPrice: n.nextLiqPrice,
          pendingImpactUsd: n.nextPendingImpactDeltaUsd,
        },
      });
      seen[ours.isFullClose ? 'full' : 'partial']++;
      if (ours.isFullClose && sizeDeltaUsd < p.sizeInUsd) seen.forcedFull++;
      if (keepLeverage && !ours.isFullClose) seen.keepLeverage++;
      seen[ours.realizedPnlUsd > 0n ? 'profit' : 'loss']++;
      if (ours.paidFromCollateralAmount > 0n) seen.paidFromCollateral++;
    }
    expect(Math.min(...Object.values(seen))).toBeGreaterThan(50);
  });
});
