import { describe, expect, it } from 'vitest';
import { prng, randomMarket, sdk, toSdkMarketInfo } from '../../../../test/support/gmxSdkOracle.ts';
import {
  applyImpactFactor,
  capPositionImpactByImpactPool,
  capPositionImpactByMaxFactor,
  cappedPositionPriceImpact,
  positionFeeUsd,
  positionPriceImpact,
} from './priceImpact.ts';

// Every case is compared exactly with the SDK's utils/fees (priceImpact.js and getPositionFee) on the same inputs.
const CASES = 2_000;
const USD = 10n ** 30n;

/** The outcome of a call that may throw, so a throw on both sides is agreement too. */
function outcome<T>(f: () => T): T | { threw: true } {
  try {
    return f();
  } catch {
    return { threw: true };
  }
}

describe('position price impact, against the SDK', () => {
  it('applyImpactFactor matches on diffs from $0 to $10B and exponents 1 to 3', () => {
    const r = prng(1);
    for (let i = 0; i < CASES; i++) {
      const diff = r.bool(0.05) ? 0n : r.logBig(1n, 10n ** 10n * USD);
      const factor = r.factor(0, 1e-7);
      const exponent = r.bool(0.3) ? USD : r.factor(1, 3);
      expect(applyImpactFactor(diff, factor, exponent), `case ${i}`).toBe(sdk.fees.applyImpactFactor(diff, factor, exponent));
    }
  });

  it('positionPriceImpact matches getPriceImpactForPosition for opens and closes, long and short, with and without virtual inventory', () => {
    const r = prng(2);
    let negative = 0;
    let positive = 0;
    let threw = 0;
    let virtual = 0;
    for (let i = 0; i < CASES; i++) {
      const m = randomMarket(r);
      const isLong = r.bool();
      const size = r.logBig(USD, 10n ** 9n * USD);
      const delta = r.bool() ? size : -size;
      const fallbackToZero = r.bool();
      const ours = outcome(() => positionPriceImpact(m, delta, isLong, { fallbackToZero }));
      const theirs = outcome(() => sdk.fees.getPriceImpactForPosition(toSdkMarketInfo(m), delta, isLong, { fallbackToZero }));
      if ('threw' in theirs) {
        threw++;
        expect(ours, `case ${i}`).toEqual(theirs);
        continue;
      }
      expect(ours, `case ${i}`).toEqual({ priceImpactUsd: theirs.priceImpactDeltaUsd, balanceWasImproved: theirs.balanceWasImproved });
      if (theirs.priceImpactDeltaUsd < 0n) negative++;
      if (theirs.priceImpactDeltaUsd > 0n) positive++;
      if (m.virtualInventoryForPositions !== 0n && theirs.priceImpactDeltaUsd < 0n) virtual++;
    }
    // The generator reaches every branch.
    expect(Math.min(negative, positive, threw, virtual)).toBeGreaterThan(50);
  });

  it('cappedPositionPriceImpact matches getCappedPositionImpactUsd; the caps match capPositionImpactUsdByMax*', () => {
    const r = prng(3);
    let capped = 0;
    for (let i = 0; i < CASES; i++) {
      const m = randomMarket(r);
      const info = toSdkMarketInfo(m);
      const isLong = r.bool();
      const isIncrease = r.bool();
      const size = r.logBig(USD, 10n ** 9n * USD);
      const capNegative = r.bool();
      const opts = { fallbackToZero: !isIncrease, capNegative };
      const ours = cappedPositionPriceImpact(m, size, isLong, isIncrease, opts);
      const theirs = sdk.fees.getCappedPositionImpactUsd(info, size, isLong, isIncrease, { fallbackToZero: !isIncrease, shouldCapNegativeImpact: capNegative });
      expect(ours, `case ${i}`).toEqual({ priceImpactUsd: theirs.priceImpactDeltaUsd, balanceWasImproved: theirs.balanceWasImproved });
      const uncapped = positionPriceImpact(m, isIncrease ? size : -size, isLong, { fallbackToZero: true }).priceImpactUsd;
      if (uncapped !== ours.priceImpactUsd) capped++;

      const impact = (r.bool() ? 1n : -1n) * r.logBig(1n, 10n ** 8n * USD);
      expect(capPositionImpactByMaxFactor(m, size, impact)).toBe(sdk.fees.capPositionImpactUsdByMaxPriceImpactFactor(info, size, impact));
      expect(capPositionImpactByImpactPool(m, impact)).toBe(sdk.fees.capPositionImpactUsdByMaxImpactPool(info, impact));
    }
    expect(capped).toBeGreaterThan(50);
  });
});

describe('position fee, against the SDK', () => {
  it('positionFeeUsd matches getPositionFee with and without a referral, balance improved or not', () => {
    const r = prng(4);
    for (let i = 0; i < CASES; i++) {
      const m = randomMarket(r);
      const size = r.logBig(USD, 10n ** 9n * USD);
      const improved = r.bool();
      const referral = r.bool() ? { totalRebateFactor: r.factor(0, 0.2), discountFactor: r.factor(0, 1) } : undefined;
      const uiFeeFactor = r.bool() ? 0n : r.factor(0, 0.001);
      const ours = positionFeeUsd(m, size, improved, referral, uiFeeFactor);
      const theirs = sdk.fees.getPositionFee(toSdkMarketInfo(m), size, improved, referral, uiFeeFactor);
      expect(ours.positionFeeUsd, `case ${i}`).toBe(theirs.positionFeeUsd);
      expect(ours.discountUsd).toBe(theirs.discountUsd);
      expect(ours.totalRebateUsd).toBe(theirs.totalRebateUsd);
      // Without a referral the SDK leaves uiFeeUsd out (its callers then take 0); with one it is applyFactor(size, uiFeeFactor).
      if (referral) expect(ours.uiFeeUsd).toBe(theirs.uiFeeUsd);
      else expect(theirs.uiFeeUsd).toBeUndefined();
    }
  });
});
