import { describe, expect, it } from 'vitest';
import { prng, randomMarket, sdk, toSdkMarketInfo } from '../../../../test/support/gmxSdkOracle.ts';
import { acceptablePriceWithSlippage, marketOrderAcceptablePrice, orderMarkPrice, priceAfterImpact } from './acceptablePrice.ts';

// Compared exactly with the SDK's utils/prices.js (getMarkPrice, getAcceptablePriceByPriceImpact,
// getAcceptablePriceInfo), utils/trade/trade.js (applySlippageToPrice) and utils/tokens.js (convertToContractPrice).
const CASES = 2_000;
const USD = 10n ** 30n;
const sides = [
  [true, true],
  [true, false],
  [false, true],
  [false, false],
] as const;

describe('acceptable prices, against the SDK', () => {
  it('orderMarkPrice and acceptablePriceWithSlippage match getMarkPrice and applySlippageToPrice for each of increase/decrease × long/short', () => {
    const r = prng(30);
    for (let i = 0; i < CASES; i++) {
      const m = randomMarket(r);
      const [isIncrease, isLong] = r.pick(sides);
      const mark = orderMarkPrice(m.prices.index, isIncrease, isLong);
      expect(mark, `case ${i}`).toBe(sdk.prices.getMarkPrice({ prices: toSdkMarketInfo(m).indexToken.prices, isIncrease, isLong }));
      const slippage = r.pick([0, 1, 30, 50, 100, 500, r.int(0, 9_999)]);
      // Scale-free: a 30-decimal per-token price and a contract price alike.
      for (const price of [mark, mark / 10n ** BigInt(m.prices.index.decimals)]) {
        expect(acceptablePriceWithSlippage(price, slippage, isIncrease, isLong)).toBe(sdk.trade.applySlippageToPrice(slippage, price, isIncrease, isLong));
      }
    }
  });

  it('a buy is bounded above the mark and a sell below', () => {
    const mark = 3_000n * USD;
    expect(acceptablePriceWithSlippage(mark, 50, true, true)).toBe(3_015n * USD);
    expect(acceptablePriceWithSlippage(mark, 50, false, false)).toBe(3_015n * USD);
    expect(acceptablePriceWithSlippage(mark, 50, true, false)).toBe(2_985n * USD);
    expect(acceptablePriceWithSlippage(mark, 50, false, true)).toBe(2_985n * USD);
  });

  it('priceAfterImpact matches getAcceptablePriceByPriceImpact', () => {
    const r = prng(31);
    for (let i = 0; i < CASES; i++) {
      const m = randomMarket(r);
      const [isIncrease, isLong] = r.pick(sides);
      const indexPrice = r.bool(0.02) ? 0n : m.prices.index.max;
      const sizeDeltaUsd = r.bool(0.02) ? 0n : r.logBig(USD, 10n ** 9n * USD);
      const impact = (r.bool() ? 1n : -1n) * r.logBig(1n, sizeDeltaUsd / 50n + 1n);
      const theirs = sdk.prices.getAcceptablePriceByPriceImpact({ isIncrease, isLong, indexPrice, sizeDeltaUsd, priceImpactDeltaUsd: impact });
      expect(priceAfterImpact(indexPrice, sizeDeltaUsd, impact, isIncrease, isLong), `case ${i}`).toEqual({
        price: theirs.acceptablePrice,
        deltaBps: theirs.acceptablePriceDeltaBps,
      });
    }
  });

  it('marketOrderAcceptablePrice matches getAcceptablePriceInfo then applySlippageToPrice then convertToContractPrice', () => {
    const r = prng(32);
    for (let i = 0; i < CASES; i++) {
      const m = randomMarket(r);
      const info = toSdkMarketInfo(m);
      const [isIncrease, isLong] = r.pick(sides);
      const sizeDeltaUsd = r.bool(0.02) ? 0n : r.logBig(USD, 10n ** 9n * USD);
      const slippageBps = r.pick([0, 30, 100, r.int(0, 2_000)]);
      const ours = marketOrderAcceptablePrice(m, { sizeDeltaUsd, isIncrease, isLong, slippageBps });
      const indexPrice = sdk.prices.getMarkPrice({ prices: info.indexToken.prices, isIncrease, isLong });
      const theirs = sdk.prices.getAcceptablePriceInfo({ marketInfo: info, isIncrease, isLimit: false, isLong, indexPrice, sizeDeltaUsd });
      const withSlippage = sdk.trade.applySlippageToPrice(slippageBps, theirs.acceptablePrice, isIncrease, isLong);
      expect(ours, `case ${i}`).toEqual({
        markPrice: indexPrice,
        priceImpactUsd: theirs.priceImpactDeltaUsd,
        balanceWasImproved: theirs.balanceWasImproved,
        impactedPrice: theirs.acceptablePrice,
        impactedPriceDeltaBps: theirs.acceptablePriceDeltaBps,
        acceptablePrice: withSlippage,
        contractAcceptablePrice: withSlippage / 10n ** BigInt(info.indexToken.decimals),
      });
    }
  });
});

describe('price scales', () => {
  it('tokenPricesFromContract and priceToContract match the SDK parseContractPrice / convertToContractPrice', async () => {
    const { tokenPricesFromContract, priceToContract } = await import('./units.ts');
    const tokens = sdk.tokens;
    const r = prng(33);
    for (let i = 0; i < 500; i++) {
      const decimals = r.pick([6, 8, 18]);
      const min = r.logBig(1n, 10n ** 30n);
      const max = min + r.logBig(1n, min);
      expect(tokenPricesFromContract({ min, max }, decimals)).toEqual({ decimals, min: tokens.parseContractPrice(min, decimals), max: tokens.parseContractPrice(max, decimals) });
      const price = r.logBig(1n, 10n ** 40n);
      expect(priceToContract(price, decimals)).toBe(tokens.convertToContractPrice(price, decimals));
    }
  });
});
