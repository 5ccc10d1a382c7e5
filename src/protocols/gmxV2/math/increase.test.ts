import { describe, expect, it } from 'vitest';
import { prng, randomMarket, randomPosition, sdk, sdkToken, toSdkMarketInfo } from '../../../../test/support/gmxSdkOracle.ts';
import { increaseQuote, type IncreaseInputs } from './increase.ts';
import { positionFigures } from './positionFigures.ts';

// Compared exactly with the SDK's utils/trade/increase.js: getIncreasePositionAmounts (market order, collateral paid
// in the position's collateral token so no swap, no UI fee) then getNextPositionValuesForIncreaseTrade on its output.
const CASES = 2_000;

describe('increase quote, against the SDK', () => {
  it('matches getIncreasePositionAmounts and getNextPositionValuesForIncreaseTrade: new and existing positions, by leverage or by size', () => {
    const r = prng(50);
    const seen = { leverage: 0, size: 0, existing: 0, fresh: 0, liquidatable: 0 };
    for (let i = 0; i < CASES; i++) {
      const m = randomMarket(r);
      const p = randomPosition(r, m);
      const info = toSdkMarketInfo(m);
      const collateralToken = sdkToken(p.collateral.address, p.collateral.isIndexToken ? 'INDEX' : 'COLLATERAL', p.collateral);
      const referral = r.bool(0.3) ? { totalRebateFactor: r.factor(0, 0.2), discountFactor: r.factor(0, 1) } : undefined;
      const existing = r.bool(0.4) ? { ...p, ...positionFigures(m, p, p.collateral, referral) } : undefined;
      const collateralAmount = r.bool(0.03) ? 0n : (p.collateralAmount * BigInt(r.int(1, 300))) / 100n;
      const byLeverage = r.bool();
      const size: IncreaseInputs['size'] = byLeverage
        ? { leverageBps: BigInt(r.int(11_000, 1_000_000)) }
        : { indexTokenAmount: r.bool(0.03) ? 0n : (p.sizeInTokens * BigInt(r.int(1, 300))) / 100n };

      const ours = increaseQuote(m, { isLong: p.isLong, collateral: p.collateral, collateralAmount, size, existing, referral });

      const amounts = sdk.increase.getIncreasePositionAmounts({
        marketInfo: info,
        indexToken: info.indexToken,
        initialCollateralToken: collateralToken,
        collateralToken,
        initialCollateralAmount: collateralAmount,
        indexTokenAmount: 'indexTokenAmount' in size ? size.indexTokenAmount : undefined,
        leverage: 'leverageBps' in size ? size.leverageBps : undefined,
        isLong: p.isLong,
        position: existing,
        userReferralInfo: referral,
        uiFeeFactor: 0n,
        strategy: byLeverage ? 'leverageByCollateral' : 'independent',
        findSwapPath: () => undefined,
        marketsInfoData: {},
        chainId: 42161,
      }) as Record<string, bigint>;
      const nextValues = sdk.increase.getNextPositionValuesForIncreaseTrade({
        existingPosition: existing,
        marketInfo: info,
        collateralToken,
        sizeDeltaUsd: amounts.sizeDeltaUsd,
        sizeDeltaInTokens: amounts.sizeDeltaInTokens,
        collateralDeltaUsd: amounts.collateralDeltaUsd,
        collateralDeltaAmount: amounts.collateralDeltaAmount,
        indexPrice: amounts.indexPrice,
        isLong: p.isLong,
        showPnlInLeverage: false,
        minCollateralUsd: m.minCollateralUsd,
        userReferralInfo: referral,
        positionPriceImpactDeltaUsd: amounts.positionPriceImpactDeltaUsd,
      }) as Record<string, bigint | undefined>;

      expect(ours, `case ${i}`).toEqual({
        indexPrice: amounts.indexPrice,
        sizeDeltaUsd: amounts.sizeDeltaUsd,
        sizeDeltaInTokens: amounts.sizeDeltaInTokens,
        collateralDeltaUsd: amounts.collateralDeltaUsd,
        collateralDeltaAmount: amounts.collateralDeltaAmount,
        positionFeeUsd: amounts.positionFeeUsd,
        feeDiscountUsd: amounts.feeDiscountUsd,
        leverageBps: amounts.estimatedLeverage,
        priceImpactUsd: amounts.positionPriceImpactDeltaUsd,
        priceImpactDiffUsd: amounts.potentialPriceImpactDiffUsd,
        impactedPrice: amounts.acceptablePrice,
        impactedPriceDeltaBps: amounts.acceptablePriceDeltaBps,
        next: {
          sizeInUsd: nextValues.nextSizeUsd,
          collateralUsd: nextValues.nextCollateralUsd,
          entryPrice: nextValues.nextEntryPrice,
          leverageBps: nextValues.nextLeverage,
          liquidationPrice: nextValues.nextLiqPrice,
          pendingImpactUsd: nextValues.nextPendingImpactDeltaUsd,
          priceImpactDiffUsd: nextValues.potentialPriceImpactDiffUsd,
        },
      });
      seen[byLeverage ? 'leverage' : 'size']++;
      seen[existing ? 'existing' : 'fresh']++;
      if (ours.next.liquidationPrice !== undefined) seen.liquidatable++;
    }
    expect(Math.min(...Object.values(seen))).toBeGreaterThan(200);
  });
});
