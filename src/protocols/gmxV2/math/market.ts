import type { Address } from 'viem';
import { applyFactor, midPrice, mulDiv, PRECISION, usdOfTokens, type TokenPrices } from './units.ts';

/**
 * What the position math needs about one GMX market: its DataStore config and state (src/protocols/gmxV2/marketParams.ts
 * reads them) and the Reader's getMarketInfo (rates that depend on the prices it was given). Factors are 30-decimal;
 * amounts are in the token's smallest units; open interest is summed over both collateral tokens and, in a market
 * whose long and short token are the same, halved, as the SDK does (GMX stores it once per token slot).
 */
export interface MarketParams {
  marketToken: Address;
  indexToken: Address;
  longToken: Address;
  shortToken: Address;
  isDisabled: boolean;

  positionFeeFactorForBalanceWasImproved: bigint;
  positionFeeFactorForBalanceWasNotImproved: bigint;
  positionImpactFactorPositive: bigint;
  positionImpactFactorNegative: bigint;
  positionImpactExponentFactorPositive: bigint;
  positionImpactExponentFactorNegative: bigint;
  maxPositionImpactFactorPositive: bigint;
  maxPositionImpactFactorNegative: bigint;
  maxPositionImpactFactorForLiquidations: bigint;

  minCollateralFactor: bigint;
  minCollateralFactorForLiquidation: bigint;
  minCollateralFactorForOpenInterestLong: bigint;
  minCollateralFactorForOpenInterestShort: bigint;
  /** Global (not per market) but needed by every liquidation price: MIN_COLLATERAL_USD. */
  minCollateralUsd: bigint;
  /** Global: MIN_POSITION_SIZE_USD. */
  minPositionSizeUsd: bigint;

  borrowingFactorLong: bigint;
  borrowingFactorShort: bigint;
  borrowingExponentFactorLong: bigint;
  borrowingExponentFactorShort: bigint;
  fundingFactor: bigint;
  fundingExponentFactor: bigint;

  reserveFactorLong: bigint;
  reserveFactorShort: bigint;
  openInterestReserveFactorLong: bigint;
  openInterestReserveFactorShort: bigint;
  maxOpenInterestLong: bigint;
  maxOpenInterestShort: bigint;
  maxLongPoolAmount: bigint;
  maxShortPoolAmount: bigint;
  maxPnlFactorForTradersLong: bigint;
  maxPnlFactorForTradersShort: bigint;

  longInterestUsd: bigint;
  shortInterestUsd: bigint;
  longInterestInTokens: bigint;
  shortInterestInTokens: bigint;
  longPoolAmount: bigint;
  shortPoolAmount: bigint;
  positionImpactPoolAmount: bigint;
  /** Global: USE_OPEN_INTEREST_IN_TOKENS_FOR_BALANCE (the impact's balance is measured in index tokens at mid price). */
  useOpenInterestInTokensForBalance: boolean;

  borrowingFactorPerSecondForLongs: bigint;
  borrowingFactorPerSecondForShorts: bigint;
  fundingFactorPerSecond: bigint;
  longsPayShorts: boolean;
  /** Signed: positive when shorts outweigh longs across the markets sharing this index token. */
  virtualInventoryForPositions: bigint;
}

export interface MarketPrices {
  index: TokenPrices;
  long: TokenPrices;
  short: TokenPrices;
}

/** A market with the prices its values are judged at. */
export type PricedMarket = MarketParams & { prices: MarketPrices };

export const openInterestUsd = (m: MarketParams, isLong: boolean): bigint => (isLong ? m.longInterestUsd : m.shortInterestUsd);
export const openInterestInTokens = (m: MarketParams, isLong: boolean): bigint => (isLong ? m.longInterestInTokens : m.shortInterestInTokens);

/** The open interest price impact balances: USD as opened, or the tokens at mid price when the DataStore says so. */
export function openInterestForBalanceUsd(m: PricedMarket, isLong: boolean): bigint {
  if (!m.useOpenInterestInTokensForBalance) return openInterestUsd(m, isLong);
  return usdOfTokens(openInterestInTokens(m, isLong), m.prices.index.decimals, midPrice(m.prices.index));
}

/** The price PnL is valued at: longs' PnL is largest at the max price, shorts' at the min (MarketUtils.getPnl). */
export const priceForPnl = (p: TokenPrices, isLong: boolean, maximize: boolean): bigint => (isLong === maximize ? p.max : p.min);

/** The aggregate PnL of one side's traders, at the price that minimises it (the pool's value at its max). */
export function marketPnlUsd(m: PricedMarket, isLong: boolean, maximize = false): bigint {
  const usd = openInterestUsd(m, isLong);
  const tokens = openInterestInTokens(m, isLong);
  if (usd === 0n || tokens === 0n) return 0n;
  const value = usdOfTokens(tokens, m.prices.index.decimals, priceForPnl(m.prices.index, isLong, maximize));
  return isLong ? value - usd : usd - value;
}

/** The USD value of the pool backing one side (long token for longs, short token for shorts), at its min price. */
export function poolUsdWithoutPnl(m: PricedMarket, isLong: boolean): bigint {
  const token = isLong ? m.prices.long : m.prices.short;
  return usdOfTokens(isLong ? m.longPoolAmount : m.shortPoolAmount, token.decimals, token.min);
}

/** A positive pool PnL capped at MAX_PNL_FACTOR_FOR_TRADERS of the pool: what traders' profits can be paid from. */
export function cappedPoolPnlUsd(m: PricedMarket, isLong: boolean, poolUsd: bigint, poolPnl: bigint): bigint {
  if (poolPnl < 0n) return poolPnl;
  const max = applyFactor(poolUsd, isLong ? m.maxPnlFactorForTradersLong : m.maxPnlFactorForTradersShort);
  return poolPnl > max ? max : poolPnl;
}

/**
 * The minimum collateral factor a position must keep after an open-interest change (MarketUtils
 * .getMinCollateralFactorForOpenInterest): the market's floor or OI × the side's multiplier, whichever is larger.
 */
export function minCollateralFactorForPosition(m: MarketParams, isLong: boolean, openInterestDeltaUsd: bigint): bigint {
  const oi = openInterestUsd(m, isLong) + openInterestDeltaUsd;
  const byOi = mulDiv(oi, isLong ? m.minCollateralFactorForOpenInterestLong : m.minCollateralFactorForOpenInterestShort, PRECISION);
  return m.minCollateralFactor > byOi ? m.minCollateralFactor : byOi;
}

/**
 * The funding factor one side pays (negative) or receives over a period, from the Reader's next funding: the paying
 * side pays fundingFactorPerSecond; the receiving side gets it scaled by paying OI / receiving OI.
 */
export function fundingFactorPerPeriod(m: PricedMarket, isLong: boolean, periodSeconds: number): bigint {
  const longOi = openInterestForBalanceUsd(m, true);
  const shortOi = openInterestForBalanceUsd(m, false);
  const [paying, receiving] = m.longsPayShorts ? [longOi, shortOi] : [shortOi, longOi];
  const seconds = BigInt(periodSeconds);
  if (m.longsPayShorts === isLong) return -m.fundingFactorPerSecond * seconds;
  return receiving === 0n ? 0n : mulDiv(m.fundingFactorPerSecond, paying, receiving) * seconds;
}

/** The borrowing factor one side pays over a period (a period of 0 counts as 1 second, as the SDK does). */
export function borrowingFactorPerPeriod(m: MarketParams, isLong: boolean, periodSeconds: number): bigint {
  return (isLong ? m.borrowingFactorPerSecondForLongs : m.borrowingFactorPerSecondForShorts) * BigInt(periodSeconds || 1);
}
