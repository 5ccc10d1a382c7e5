import { keccak256, parseUnits, stringToHex, type Hex } from 'viem';

/**
 * The devnet's Aave v3 market: what is listed and how. Changing anything that goes into a constructor (the
 * market id, prices' owner, rate strategies, oracle sources) moves the addresses that depend on it; bump the
 * salt's version if addresses must change for another reason.
 */

/** The CREATE2 salt of every Aave contract on the devnet: init codes tell them apart. */
export const AAVE_V3_SALT: Hex = keccak256(stringToHex('agent-wallet/devnet/aaveV3/v1'));

export const MARKET_ID = 'Agent Wallet Devnet Aave Market';

/** Oracle base currency: USD with 8 decimals, as Aave's own markets (base currency address 0, unit 1e8). */
export const PRICE_DECIMALS = 8;
export const BASE_CURRENCY_UNIT = 10n ** BigInt(PRICE_DECIMALS);

/** Aave's flash loan premiums in its own markets (aave-v3-deploy, markets/aave): 0.05 % in total, 0.04 % of it to the protocol. */
export const FLASHLOAN_PREMIUM_TOTAL = 5n;
export const FLASHLOAN_PREMIUM_TO_PROTOCOL = 4n;

/** DefaultReserveInterestRateStrategy's constructor parameters after the provider (rays: 1e27 = 100 %). */
export interface InterestRateStrategyParameters {
  name: string;
  optimalUsageRatio: bigint;
  baseVariableBorrowRate: bigint;
  variableRateSlope1: bigint;
  variableRateSlope2: bigint;
  stableRateSlope1: bigint;
  stableRateSlope2: bigint;
  baseStableRateOffset: bigint;
  stableRateExcessOffset: bigint;
  optimalStableToTotalDebtRatio: bigint;
}

const ray = (percent: string): bigint => parseUnits(percent, 25);

/** The two strategies Aave's deploy scripts give stablecoins and ETH (aave-v3-deploy, markets/aave/rateStrategies.ts). */
const STABLE_STRATEGY: InterestRateStrategyParameters = {
  name: 'rateStrategyStableOne',
  optimalUsageRatio: ray('90'),
  baseVariableBorrowRate: 0n,
  variableRateSlope1: ray('4'),
  variableRateSlope2: ray('60'),
  stableRateSlope1: ray('0.5'),
  stableRateSlope2: ray('60'),
  baseStableRateOffset: ray('1'),
  stableRateExcessOffset: ray('8'),
  optimalStableToTotalDebtRatio: ray('20'),
};
const VOLATILE_STRATEGY: InterestRateStrategyParameters = {
  name: 'rateStrategyVolatileOne',
  optimalUsageRatio: ray('45'),
  baseVariableBorrowRate: 0n,
  variableRateSlope1: ray('7'),
  variableRateSlope2: ray('300'),
  stableRateSlope1: ray('7'),
  stableRateSlope2: ray('300'),
  baseStableRateOffset: ray('2'),
  stableRateExcessOffset: ray('5'),
  optimalStableToTotalDebtRatio: ray('20'),
};

/** One listed asset: the devnet token it is, its price feed, risk parameters (basis points) and the initial supply. */
export interface ReserveParameters {
  symbol: 'USDC' | 'WETH';
  decimals: number;
  /** The feed's starting answer, USD with PRICE_DECIMALS decimals. */
  priceUsd: bigint;
  strategy: InterestRateStrategyParameters;
  ltv: number;
  liquidationThreshold: number;
  /** 10500 = the liquidator gets 5 % more collateral than the debt it repays. */
  liquidationBonus: number;
  reserveFactor: number;
  liquidationProtocolFee: number;
  /** What the deployer supplies, so that the reserve can be borrowed at once (whole tokens). */
  seedSupply: bigint;
}

/** Stable borrowing stays off (Aave turned it off everywhere); supply and borrow caps stay 0 (none). */
export const RESERVES: readonly ReserveParameters[] = [
  {
    symbol: 'USDC',
    decimals: 6,
    priceUsd: 1n * BASE_CURRENCY_UNIT,
    strategy: STABLE_STRATEGY,
    ltv: 7500,
    liquidationThreshold: 7800,
    liquidationBonus: 10500,
    reserveFactor: 1000,
    liquidationProtocolFee: 1000,
    seedSupply: 1_000_000n,
  },
  {
    symbol: 'WETH',
    decimals: 18,
    priceUsd: 3000n * BASE_CURRENCY_UNIT,
    strategy: VOLATILE_STRATEGY,
    ltv: 8000,
    liquidationThreshold: 8250,
    liquidationBonus: 10500,
    reserveFactor: 1500,
    liquidationProtocolFee: 1000,
    seedSupply: 1_000n,
  },
];

/** UiPoolDataProviderV3's "market reference currency" feed: USD in USD, always 1 (Aave's markets use 1e8 too). */
export const USD_FEED_ANSWER = BASE_CURRENCY_UNIT;

/** Token names as Aave's Ethereum markets have them: `Aave Ethereum USDC`, `aEthUSDC`, `variableDebtEthUSDC`. */
export function reserveTokenNames(symbol: string) {
  return {
    aTokenName: `Aave Ethereum ${symbol}`,
    aTokenSymbol: `aEth${symbol}`,
    variableDebtTokenName: `Aave Ethereum Variable Debt ${symbol}`,
    variableDebtTokenSymbol: `variableDebtEth${symbol}`,
    stableDebtTokenName: `Aave Ethereum Stable Debt ${symbol}`,
    stableDebtTokenSymbol: `stableDebtEth${symbol}`,
  };
}
