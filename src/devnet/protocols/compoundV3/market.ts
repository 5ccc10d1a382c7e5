import { parseUnits } from 'viem';
import type { TokenSymbol } from '../../../config/chainConfig.ts';

/** Factors and yearly rates as Comet's configuration takes them: 1e18 = 1 = 100 %. */
const factor = (value: string): bigint => parseUnits(value, 18);
/** Chainlink-style USD prices with 8 decimals, as Comet requires of every feed. */
const usd = (value: string): bigint => parseUnits(value, 8);

/**
 * The devnet's Compound v3 market: "Compound USDC" (cUSDCv3) on `base`, modelled on Base Sepolia's
 * deployments/base-sepolia/usdc/configuration.json (README.md compares them). Changing any value changes the
 * init code, hence every address: bump the salt's version only when you mean to move them anyway.
 */
export const USDC_MARKET = {
  name: 'Compound USDC',
  symbol: 'cUSDCv3',
  base: { symbol: 'USDC' as TokenSymbol, priceUsd: usd('1') },
  /** The smallest borrow: 1 USDC (Base Sepolia has 1e0, one millionth of a USDC). */
  baseBorrowMin: parseUnits('1', 6),
  rates: {
    supplyKink: factor('0.85'),
    supplyPerYearInterestRateSlopeLow: factor('0.048'),
    supplyPerYearInterestRateSlopeHigh: factor('1.6'),
    supplyPerYearInterestRateBase: 0n,
    borrowKink: factor('0.85'),
    borrowPerYearInterestRateSlopeLow: factor('0.053'),
    borrowPerYearInterestRateSlopeHigh: factor('1.7'),
    borrowPerYearInterestRateBase: factor('0.015'),
  },
  collateral: [
    {
      symbol: 'WETH' as TokenSymbol,
      priceUsd: usd('3000'),
      borrowCollateralFactor: factor('0.775'),
      liquidateCollateralFactor: factor('0.825'),
      liquidationFactor: factor('0.95'),
      /** 100,000 WETH (Base Sepolia: 1,000): the run's tests and agents share one market, and mint freely. */
      supplyCap: parseUnits('100000', 18),
    },
  ],
  /** Supplied by the protocol deployer at deployment, so that borrowing works at once. */
  seedSupply: parseUnits('1000000', 6),
} as const;

export type CometMarket = typeof USDC_MARKET;
