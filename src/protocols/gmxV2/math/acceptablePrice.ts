import { mulDiv, BASIS_POINTS, basisPointsOf, type TokenPrices } from './units.ts';

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
