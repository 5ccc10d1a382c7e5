import { describe, expect, it } from 'vitest';
import { prng, randomMarket, randomPosition, sdk, toSdkMarketInfo } from '../../../../test/support/gmxSdkOracle.ts';
import { borrowingFactorPerPeriod, cappedPoolPnlUsd, fundingFactorPerPeriod, marketPnlUsd, minCollateralFactorForPosition, poolUsdWithoutPnl } from './market.ts';
import {
  entryPrice,
  leverageBps,
  netPriceImpactForDecrease,
  pendingFeesUsd,
  positionNetValueUsd,
  positionPnlAfterFeesUsd,
  positionPnlUsd,
  proportionalPendingImpact,
} from './position.ts';

// Every case is compared exactly with the SDK's utils/positions.js and utils/markets.js on the same inputs.
const CASES = 2_000;
const USD = 10n ** 30n;

describe('position values, against the SDK', () => {
  it('entryPrice matches getEntryPrice', () => {
    const r = prng(10);
    for (let i = 0; i < CASES; i++) {
      const m = randomMarket(r);
      const p = randomPosition(r, m);
      const sizeInTokens = r.bool(0.05) ? 0n : p.sizeInTokens;
      const theirs = sdk.positions.getEntryPrice({ sizeInUsd: p.sizeInUsd, sizeInTokens, indexToken: toSdkMarketInfo(m).indexToken });
      expect(entryPrice({ sizeInUsd: p.sizeInUsd, sizeInTokens }, m.prices.index.decimals), `case ${i}`).toBe(theirs);
    }
  });

  it('positionPnlUsd matches getPositionPnlUsd in profit and loss, long and short, with the pool-PnL cap binding or not', () => {
    const r = prng(11);
    let profit = 0;
    let loss = 0;
    let scaled = 0;
    for (let i = 0; i < CASES; i++) {
      const m = randomMarket(r);
      const p = randomPosition(r, m);
      const markPrice = r.pick([m.prices.index.min, m.prices.index.max, (m.prices.index.min * BigInt(r.int(1, 300))) / 100n]);
      const ours = positionPnlUsd(m, p, markPrice);
      const theirs = sdk.positions.getPositionPnlUsd({ marketInfo: toSdkMarketInfo(m), sizeInUsd: p.sizeInUsd, sizeInTokens: p.sizeInTokens, markPrice, isLong: p.isLong });
      expect(ours, `case ${i}`).toBe(theirs);
      if (ours > 0n) profit++;
      if (ours < 0n) loss++;
      const value = (p.sizeInTokens * markPrice) / 10n ** BigInt(m.prices.index.decimals);
      if (ours > 0n && ours !== (p.isLong ? value - p.sizeInUsd : p.sizeInUsd - value)) scaled++;
    }
    expect(Math.min(profit, loss, scaled)).toBeGreaterThan(50);
  });

  it('the market PnL, pool value and PnL cap match getMarketPnl, getPoolUsdWithoutPnl and getCappedPoolPnl', () => {
    const r = prng(12);
    for (let i = 0; i < CASES; i++) {
      const m = randomMarket(r);
      const info = toSdkMarketInfo(m);
      const isLong = r.bool();
      const maximize = r.bool();
      expect(marketPnlUsd(m, isLong, maximize), `case ${i}`).toBe(sdk.markets.getMarketPnl(info, isLong, !maximize));
      const poolUsd = poolUsdWithoutPnl(m, isLong);
      expect(poolUsd).toBe(sdk.markets.getPoolUsdWithoutPnl(info, isLong, 'minPrice'));
      const poolPnl = (r.bool() ? 1n : -1n) * r.logBig(1n, 10n ** 9n * USD);
      expect(cappedPoolPnlUsd(m, isLong, poolUsd, poolPnl)).toBe(sdk.markets.getCappedPoolPnl({ marketInfo: info, poolUsd, poolPnl, isLong }));
    }
  });

  it('pending fees, net value, PnL after fees and leverage match the SDK', () => {
    const r = prng(13);
    let undefinedLeverage = 0;
    for (let i = 0; i < CASES; i++) {
      const m = randomMarket(r);
      const p = randomPosition(r, m);
      const collateralUsd = (p.collateralAmount * p.collateral.min) / 10n ** BigInt(p.collateral.decimals);
      const v = {
        pendingFundingFeesUsd: (p.fundingFeeAmount * p.collateral.min) / 10n ** BigInt(p.collateral.decimals),
        pendingBorrowingFeesUsd: p.pendingBorrowingFeesUsd,
        collateralUsd,
        pnlUsd: (r.bool() ? 1n : -1n) * r.logBig(1n, collateralUsd * 3n + 1n),
        closingFeeUsd: r.logBig(1n, p.sizeInUsd / 100n + 1n),
        uiFeeUsd: r.bool() ? 0n : r.logBig(1n, p.sizeInUsd / 1000n + 1n),
        totalImpactUsd: (r.bool() ? 1n : -1n) * r.logBig(1n, p.sizeInUsd / 100n + 1n),
        priceImpactDiffUsd: r.bool() ? 0n : r.logBig(1n, p.sizeInUsd / 100n + 1n),
      };
      const sdkArgs = { ...v, pnl: v.pnlUsd, totalPendingImpactDeltaUsd: v.totalImpactUsd };
      expect(pendingFeesUsd(v), `case ${i}`).toBe(sdk.positions.getPositionPendingFeesUsd(sdkArgs));
      expect(positionNetValueUsd(v)).toBe(sdk.positions.getPositionNetValue(sdkArgs));
      expect(positionPnlAfterFeesUsd(v)).toBe(sdk.positions.getPositionPnlAfterFees(sdkArgs));
      const withPnl = r.bool();
      const ours = leverageBps({ ...v, sizeInUsd: p.sizeInUsd, pnlUsd: withPnl ? v.pnlUsd : undefined });
      expect(ours).toBe(sdk.positions.getLeverage({ ...sdkArgs, sizeInUsd: p.sizeInUsd, pnl: withPnl ? v.pnlUsd : undefined }));
      if (ours === undefined) undefinedLeverage++;
    }
    expect(undefinedLeverage).toBeGreaterThan(5);
  });

  it('the decrease impact matches getProportionalPendingImpactValues and getNetPriceImpactDeltaUsdForDecrease', () => {
    const r = prng(14);
    let diff = 0;
    for (let i = 0; i < CASES; i++) {
      const m = randomMarket(r);
      const info = toSdkMarketInfo(m);
      const p = randomPosition(r, m);
      const sizeDeltaUsd = r.bool(0.3) ? p.sizeInUsd : r.logBig(1n, p.sizeInUsd);
      const priceImpactUsd = (r.bool() ? 1n : -1n) * r.logBig(1n, sizeDeltaUsd / 20n + 1n);
      const prop = proportionalPendingImpact(m, p, sizeDeltaUsd);
      const theirsProp = sdk.fees.getProportionalPendingImpactValues({ sizeInUsd: p.sizeInUsd, pendingImpactAmount: p.pendingImpactAmount, sizeDeltaUsd, indexToken: info.indexToken });
      expect(prop, `case ${i}`).toEqual({ amount: theirsProp.proportionalPendingImpactDeltaAmount, usd: theirsProp.proportionalPendingImpactDeltaUsd });
      const ours = netPriceImpactForDecrease(m, p, sizeDeltaUsd, priceImpactUsd);
      const theirs = sdk.positions.getNetPriceImpactDeltaUsdForDecrease({ marketInfo: info, sizeInUsd: p.sizeInUsd, pendingImpactAmount: p.pendingImpactAmount, priceImpactDeltaUsd: priceImpactUsd, sizeDeltaUsd });
      expect(ours).toEqual({ totalImpactUsd: theirs.totalImpactDeltaUsd, proportionalPendingImpactUsd: theirs.proportionalPendingImpactDeltaUsd, priceImpactDiffUsd: theirs.priceImpactDiffUsd });
      if (ours.priceImpactDiffUsd > 0n) diff++;
    }
    expect(diff).toBeGreaterThan(50);
  });
});

describe('market rates and collateral floor, against the SDK', () => {
  it('funding and borrowing factors per period match getFundingFactorPerPeriod and getBorrowingFactorPerPeriod', () => {
    const r = prng(15);
    for (let i = 0; i < CASES; i++) {
      const m = randomMarket(r);
      const info = toSdkMarketInfo(m);
      const isLong = r.bool();
      const period = r.pick([0, 1, 3600, 86_400, 365 * 86_400]);
      expect(fundingFactorPerPeriod(m, isLong, period), `case ${i}`).toBe(sdk.fees.getFundingFactorPerPeriod(info, isLong, period));
      expect(borrowingFactorPerPeriod(m, isLong, period)).toBe(sdk.fees.getBorrowingFactorPerPeriod(info, isLong, period));
    }
  });

  it('minCollateralFactorForPosition matches getMinCollateralFactorForPosition', () => {
    const r = prng(16);
    for (let i = 0; i < CASES; i++) {
      const m = randomMarket(r);
      const isLong = r.bool();
      const delta = (r.bool(0.7) ? 1n : -1n) * r.logBig(1n, 10n ** 8n * USD);
      expect(minCollateralFactorForPosition(m, isLong, delta), `case ${i}`).toBe(
        sdk.positions.getMinCollateralFactorForPosition({ marketInfo: toSdkMarketInfo(m), isLong }, delta),
      );
    }
  });
});
