/**
 * Morpho Blue's share and interest arithmetic, as its libraries define it (MathLib, SharesMathLib,
 * MorphoBalancesLib in @morpho-org/morpho-blue): integers only, the same roundings, so what we show is what the
 * contract would compute.
 */
export const WAD = 10n ** 18n;
/** Price scale of a Morpho oracle: `price()` is collateral → loan, times 1e36 (adjusted by the decimals). */
export const ORACLE_PRICE_SCALE = 10n ** 36n;
const VIRTUAL_SHARES = 10n ** 6n;
const VIRTUAL_ASSETS = 1n;

const mulDivDown = (x: bigint, y: bigint, d: bigint) => (x * y) / d;
const mulDivUp = (x: bigint, y: bigint, d: bigint) => (x * y + (d - 1n)) / d;
export const wMulDown = (x: bigint, y: bigint) => mulDivDown(x, y, WAD);

export const toAssetsDown = (shares: bigint, totalAssets: bigint, totalShares: bigint) => mulDivDown(shares, totalAssets + VIRTUAL_ASSETS, totalShares + VIRTUAL_SHARES);
export const toAssetsUp = (shares: bigint, totalAssets: bigint, totalShares: bigint) => mulDivUp(shares, totalAssets + VIRTUAL_ASSETS, totalShares + VIRTUAL_SHARES);
export const toSharesDown = (assets: bigint, totalAssets: bigint, totalShares: bigint) => mulDivDown(assets, totalShares + VIRTUAL_SHARES, totalAssets + VIRTUAL_ASSETS);

/** e^(x·n) − 1 to three terms, as MathLib.wTaylorCompounded. */
export function wTaylorCompounded(x: bigint, n: bigint): bigint {
  const first = x * n;
  const second = mulDivDown(first, first, 2n * WAD);
  const third = mulDivDown(second, first, 3n * WAD);
  return first + second + third;
}

/** A market's totals, as `market(id)` returns them. */
export interface MarketState {
  totalSupplyAssets: bigint;
  totalSupplyShares: bigint;
  totalBorrowAssets: bigint;
  totalBorrowShares: bigint;
  lastUpdate: bigint;
  fee: bigint;
}

/** The totals with interest accrued from `lastUpdate` to `now` at `borrowRate` (per second, WAD), as MorphoBalancesLib does. */
export function expectedMarket(m: MarketState, borrowRate: bigint, now: bigint): MarketState {
  const elapsed = now > m.lastUpdate ? now - m.lastUpdate : 0n;
  if (elapsed === 0n || m.totalBorrowAssets === 0n) return m;
  const interest = wMulDown(m.totalBorrowAssets, wTaylorCompounded(borrowRate, elapsed));
  const next = { ...m, totalBorrowAssets: m.totalBorrowAssets + interest, totalSupplyAssets: m.totalSupplyAssets + interest, lastUpdate: now };
  if (m.fee !== 0n) {
    const feeAmount = wMulDown(interest, m.fee);
    next.totalSupplyShares += toSharesDown(feeAmount, next.totalSupplyAssets - feeAmount, m.totalSupplyShares);
  }
  return next;
}
