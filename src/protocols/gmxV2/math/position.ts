import { cappedPoolPnlUsd, marketPnlUsd, poolUsdWithoutPnl, type PricedMarket } from './market.ts';
import { capPositionImpactByImpactPool, capPositionImpactByMaxFactor, maxPositionImpactFactors } from './priceImpact.ts';
import { applyFactor, BASIS_POINTS, mulDiv, pow10, usdOfTokens, type TokenPrices } from './units.ts';

/** A position's size as the Reader returns it (Position.Props numbers). */
export interface PositionSize {
  sizeInUsd: bigint;
  sizeInTokens: bigint;
  isLong: boolean;
}

/** The average price the position was opened at, USD per whole index token (30 decimals); undefined when empty. */
export function entryPrice(p: Pick<PositionSize, 'sizeInUsd' | 'sizeInTokens'>, indexDecimals: number): bigint | undefined {
  if (p.sizeInTokens <= 0n) return undefined;
  return mulDiv(p.sizeInUsd, pow10(indexDecimals), p.sizeInTokens);
}

/** The index price a position is marked at: the one it would close at (longs sell at min, shorts buy at max). */
export const closingMarkPrice = (index: TokenPrices, isLong: boolean): bigint => (isLong ? index.min : index.max);

/**
 * The position's PnL at `markPrice` (PositionUtils.getPositionPnlUsd): value − size for a long, the reverse for a
 * short; a profit is scaled down when the side's pool PnL exceeds MAX_PNL_FACTOR_FOR_TRADERS of its pool (the
 * share of the capped pool profit this position can be paid). The SDK scales in 18 decimals (it divides both
 * PnLs by 1e18 first), and so does this.
 */
export function positionPnlUsd(m: PricedMarket, p: PositionSize, markPrice: bigint): bigint {
  const value = usdOfTokens(p.sizeInTokens, m.prices.index.decimals, markPrice);
  const pnl = p.isLong ? value - p.sizeInUsd : p.sizeInUsd - value;
  if (pnl <= 0n) return pnl;
  const poolPnl = marketPnlUsd(m, p.isLong);
  const capped = cappedPoolPnlUsd(m, p.isLong, poolUsdWithoutPnl(m, p.isLong), poolPnl);
  if (capped === poolPnl || capped <= 0n || poolPnl <= 0n) return pnl;
  const wei = 10n ** 18n;
  return mulDiv(pnl, capped / wei, poolPnl / wei);
}

/** Fees accrued since the position was last touched, both in 30-decimal USD. */
export interface PendingFees {
  pendingFundingFeesUsd: bigint;
  pendingBorrowingFeesUsd: bigint;
}

export const pendingFeesUsd = (f: PendingFees): bigint => f.pendingFundingFeesUsd + f.pendingBorrowingFeesUsd;

/**
 * The Reader reports funding owed as an amount of the collateral token (fees.funding.fundingFeeAmount) and
 * borrowing in USD; the SDK values the funding at the collateral's min price.
 */
export const fundingFeeUsd = (fundingFeeAmount: bigint, collateral: TokenPrices): bigint => usdOfTokens(fundingFeeAmount, collateral.decimals, collateral.min);

/** What closing the position now would pay out, before swaps: collateral − pending fees − closing and UI fees + PnL + net impact. */
export interface NetValueInputs extends PendingFees {
  collateralUsd: bigint;
  pnlUsd: bigint;
  closingFeeUsd: bigint;
  uiFeeUsd: bigint;
  /** The decrease's impact incl. the position's pending impact, capped (netPriceImpactForDecrease). */
  totalImpactUsd: bigint;
  /** The part of a negative impact beyond the cap, claimable later. */
  priceImpactDiffUsd: bigint;
}

export function positionNetValueUsd(v: NetValueInputs): bigint {
  return v.collateralUsd - pendingFeesUsd(v) - v.closingFeeUsd - v.uiFeeUsd + v.pnlUsd + v.totalImpactUsd + v.priceImpactDiffUsd;
}

export function positionPnlAfterFeesUsd(v: Omit<NetValueInputs, 'collateralUsd'>): bigint {
  return v.pnlUsd - pendingFeesUsd(v) - v.closingFeeUsd - v.uiFeeUsd + v.totalImpactUsd + v.priceImpactDiffUsd;
}

/**
 * Leverage in basis points (10000 = 1×): size / (collateral + PnL − pending fees); undefined when that remainder is
 * not positive. Leave `pnlUsd` out for the leverage without PnL (GMX's UI default).
 */
export function leverageBps(p: PendingFees & { sizeInUsd: bigint; collateralUsd: bigint; pnlUsd?: bigint }): bigint | undefined {
  const remaining = p.collateralUsd + (p.pnlUsd ?? 0n) - pendingFeesUsd(p);
  if (remaining <= 0n) return undefined;
  return mulDiv(p.sizeInUsd, BASIS_POINTS, remaining);
}

/**
 * The share of the position's pending impact (Position.pendingImpactAmount, index tokens, signed) a decrease of
 * `sizeDeltaUsd` realises, and its USD value (a gain at the min price, a cost at the max).
 */
export function proportionalPendingImpact(
  m: PricedMarket,
  p: { sizeInUsd: bigint; pendingImpactAmount: bigint },
  sizeDeltaUsd: bigint,
): { amount: bigint; usd: bigint } {
  // Truncated toward zero either way, as the SDK (its round-up flag never fires on a negative product; see mulDiv).
  const amount = sizeDeltaUsd !== 0n && p.sizeInUsd !== 0n ? mulDiv(p.pendingImpactAmount, sizeDeltaUsd, p.sizeInUsd, p.pendingImpactAmount < 0n) : 0n;
  const price = amount > 0n ? m.prices.index.min : m.prices.index.max;
  return { amount, usd: usdOfTokens(amount, m.prices.index.decimals, price) };
}

/**
 * How far a negative impact goes beyond MAX_POSITION_IMPACT_FACTOR (negative) of the size: GMX charges only up to
 * the cap and lets the rest be claimed later; 0 for a positive impact or one within the cap.
 */
export function priceImpactDiffUsd(m: PricedMarket, totalImpactUsd: bigint, sizeDeltaUsd: bigint): bigint {
  if (totalImpactUsd > 0n) return 0n;
  const maxNegative = -applyFactor(sizeDeltaUsd, maxPositionImpactFactors(m).maxNegative);
  return totalImpactUsd < maxNegative ? maxNegative - totalImpactUsd : 0n;
}

/**
 * The impact a decrease realises (DecreasePositionCollateralUtils): the order's impact plus the proportional pending
 * impact; a positive total capped by the max factor and the impact pool; the part of a negative total beyond
 * MAX_POSITION_IMPACT_FACTOR (negative) reported apart as `priceImpactDiffUsd` (GMX lets it be claimed later).
 */
export function netPriceImpactForDecrease(
  m: PricedMarket,
  p: { sizeInUsd: bigint; pendingImpactAmount: bigint },
  sizeDeltaUsd: bigint,
  priceImpactUsd: bigint,
): { totalImpactUsd: bigint; proportionalPendingImpactUsd: bigint; priceImpactDiffUsd: bigint } {
  const proportional = proportionalPendingImpact(m, p, sizeDeltaUsd).usd;
  let total = priceImpactUsd + proportional;
  const diff = priceImpactDiffUsd(m, total, sizeDeltaUsd);
  if (total > 0n) total = capPositionImpactByMaxFactor(m, sizeDeltaUsd, total);
  total = capPositionImpactByImpactPool(m, total);
  return { totalImpactUsd: total, proportionalPendingImpactUsd: proportional, priceImpactDiffUsd: diff };
}
