import type { PricedMarket } from './market.ts';
import { cappedPositionPriceImpact } from './priceImpact.ts';
import { basisPointsOf, BASIS_POINTS, mulDiv, priceToContract, type TokenPrices } from './units.ts';

/**
 * Whether an order's price bound is a maximum: opening a long or closing a short buys the index token, so it must
 * not pay more than the bound (and is marked at the max price); the other two sell, and must not get less.
 */
export const isPriceBoundMax = (isIncrease: boolean, isLong: boolean): boolean => (isIncrease ? isLong : !isLong);

/** The index price an order executes near: the max price when it buys, the min when it sells (the SDK's getMarkPrice). */
export const orderMarkPrice = (index: Pick<TokenPrices, 'min' | 'max'>, isIncrease: boolean, isLong: boolean): bigint =>
  isPriceBoundMax(isIncrease, isLong) ? index.max : index.min;

/**
 * The acceptable price for a market order: the mark price moved against the trader by `slippageBps` (the SDK's
 * applySlippageToPrice), truncated. Scale-free: pass a contract price to get one.
 */
export function acceptablePriceWithSlippage(markPrice: bigint, slippageBps: number, isIncrease: boolean, isLong: boolean): bigint {
  const bps = isPriceBoundMax(isIncrease, isLong) ? BASIS_POINTS + BigInt(slippageBps) : BASIS_POINTS - BigInt(slippageBps);
  return mulDiv(markPrice, bps, BASIS_POINTS);
}

/**
 * The execution price a price impact implies (the SDK's getAcceptablePriceByPriceImpact): index × (size ∓ impact) /
 * size, a negative impact moving it against the trader; and how far that is from the index price, in bps (negative
 * when against the trader).
 */
export function priceAfterImpact(
  indexPrice: bigint,
  sizeDeltaUsd: bigint,
  priceImpactUsd: bigint,
  isIncrease: boolean,
  isLong: boolean,
): { price: bigint; deltaBps: bigint } {
  if (sizeDeltaUsd <= 0n || indexPrice === 0n) return { price: indexPrice, deltaBps: 0n };
  const flip = isPriceBoundMax(isIncrease, isLong);
  const price = mulDiv(indexPrice, sizeDeltaUsd + (flip ? -priceImpactUsd : priceImpactUsd), sizeDeltaUsd);
  const delta = (indexPrice - price) * (flip ? 1n : -1n);
  return { price, deltaBps: basisPointsOf(delta, indexPrice) };
}

export interface MarketOrderPrice {
  /** The index price the order is marked at (orderMarkPrice). */
  markPrice: bigint;
  /** The order's uncapped impact on the position balance (positive: the trader gains). */
  priceImpactUsd: bigint;
  balanceWasImproved: boolean;
  /** The price that impact implies, and how far it is from the mark, bps (negative: against the trader). */
  impactedPrice: bigint;
  impactedPriceDeltaBps: bigint;
  /** The bound the order carries: the impacted price moved by the slippage, USD per whole token (30 decimals)… */
  acceptablePrice: bigint;
  /** …and as the contracts take it (an order's numbers.acceptablePrice). */
  contractAcceptablePrice: bigint;
}

/**
 * A market increase or decrease order's acceptable price, as the SDK builds one (getAcceptablePriceInfo, then
 * applySlippageToPrice, then convertToContractPrice): the mark price moved by the order's own uncapped price
 * impact (a decrease's impact falls back to 0 if the open interest would go negative), then by `slippageBps`.
 */
export function marketOrderAcceptablePrice(
  m: PricedMarket,
  o: { sizeDeltaUsd: bigint; isIncrease: boolean; isLong: boolean; slippageBps: number },
): MarketOrderPrice {
  const markPrice = orderMarkPrice(m.prices.index, o.isIncrease, o.isLong);
  let priceImpactUsd = 0n;
  let balanceWasImproved = false;
  let impacted = { price: 0n, deltaBps: 0n };
  if (o.sizeDeltaUsd > 0n && markPrice !== 0n) {
    ({ priceImpactUsd, balanceWasImproved } = cappedPositionPriceImpact(m, o.sizeDeltaUsd, o.isLong, o.isIncrease, { fallbackToZero: !o.isIncrease }));
    impacted = priceAfterImpact(markPrice, o.sizeDeltaUsd, priceImpactUsd, o.isIncrease, o.isLong);
  }
  const acceptablePrice = acceptablePriceWithSlippage(impacted.price, o.slippageBps, o.isIncrease, o.isLong);
  return {
    markPrice,
    priceImpactUsd,
    balanceWasImproved,
    impactedPrice: impacted.price,
    impactedPriceDeltaBps: impacted.deltaBps,
    acceptablePrice,
    contractAcceptablePrice: priceToContract(acceptablePrice, m.prices.index.decimals),
  };
}
