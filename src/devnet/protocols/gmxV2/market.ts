import { parseUnits } from 'viem';
import type { TokenSymbol } from '../../../config/chainConfig.ts';

/** A factor in GMX's 30-decimal fixed point (1.0 = 10^30). */
export const factor = (value: string): bigint => parseUnits(value, 30);
/** A USD amount in GMX's 30 decimals. */
export const usd30 = (value: string): bigint => parseUnits(value, 30);

/** The devnet feeds' decimals (Chainlink USD feeds have 8). */
export const FEED_DECIMALS = 8;

/**
 * The devnet's one GMX v2 market, ETH/USD [WETH-USDC] on arbitrum: index and long token the devnet's WETH, short
 * token its USDC, priced by DevnetPriceFeeds the protocol deployer owns. Parameters are of GMX's order of magnitude
 * on Arbitrum, chosen so every fee is visibly non-zero within minutes of a test's time travel.
 */
export const ETH_USD_MARKET = {
  name: 'ETH/USD [WETH-USDC]',
  index: 'WETH' as TokenSymbol,
  long: 'WETH' as TokenSymbol,
  short: 'USDC' as TokenSymbol,
  /** The feeds' starting answers (8 decimals). */
  feeds: [
    { symbol: 'WETH' as TokenSymbol, priceUsd: parseUnits('3000', FEED_DECIMALS) },
    { symbol: 'USDC' as TokenSymbol, priceUsd: parseUnits('1', FEED_DECIMALS) },
  ],
  /** Pool liquidity (100 WETH wrapped from the deployer's ETH, 300,000 USDC minted): ~$100k positions open. */
  seed: { long: parseUnits('100', 18), short: parseUnits('300000', 6) },
  /** The position impact pool (WETH): positive price impact is paid out of it. */
  impactPool: parseUnits('1', 18),
  params: {
    positionFeeFactor: { positive: factor('0.0005'), negative: factor('0.0007') },
    /** factor × imbalance²: a $100k imbalance costs about $10. */
    positionImpactFactor: { positive: factor('0.0000000005'), negative: factor('0.000000001') },
    positionImpactExponentFactor: factor('2'),
    maxPositionImpactFactor: factor('0.005'),
    /** 1% of the size: 100x at most. */
    minCollateralFactor: factor('0.01'),
    minCollateralFactorForOpenInterestMultiplier: 0n,
    reserveFactor: factor('0.8'),
    openInterestReserveFactor: factor('0.75'),
    maxOpenInterest: usd30('1000000'),
    maxPoolAmount: { long: parseUnits('10000', 18), short: parseUnits('50000000', 6) },
    /** Per second, × (reserved / pool): ~63% a year at full use. */
    borrowingFactor: factor('0.00000002'),
    borrowingExponentFactor: factor('1'),
    /** Per second, × (imbalance / open interest). */
    fundingFactor: factor('0.00000002'),
    fundingExponentFactor: factor('1'),
    /** The swap fee (SwapPricingType Swap: a Reader quote asked as a swap); each lower when the pool's balance improves. */
    swapFeeFactor: { positive: factor('0.0005'), negative: factor('0.0007') },
    /** What the keeper charges deposits and withdrawals (GMX 2.1+: their own factors, by SwapPricingType). */
    depositFeeFactor: { positive: factor('0.0004'), negative: factor('0.0006') },
    withdrawalFeeFactor: { positive: factor('0.0003'), negative: factor('0.0008') },
    /** factor × (pool imbalance in USD)²: a deposit moving a balanced pool by $100k costs $10 (as positions'). */
    swapImpactFactor: { positive: factor('0.0000000005'), negative: factor('0.000000001') },
    swapImpactExponentFactor: factor('2'),
  },
} as const;

/** Global config (GMX's Keys.sol names): execution fee estimate, order, deposit and withdrawal gas limits, position minimums. */
export const GLOBAL_PARAMS = {
  ESTIMATED_GAS_FEE_BASE_AMOUNT_V2_1: 500_000n,
  ESTIMATED_GAS_FEE_PER_ORACLE_PRICE: 40_000n,
  ESTIMATED_GAS_FEE_MULTIPLIER_FACTOR: factor('1'),
  EXECUTION_GAS_FEE_BASE_AMOUNT_V2_1: 300_000n,
  EXECUTION_GAS_FEE_MULTIPLIER_FACTOR: factor('1'),
  INCREASE_ORDER_GAS_LIMIT: 2_000_000n,
  DECREASE_ORDER_GAS_LIMIT: 2_000_000n,
  SWAP_ORDER_GAS_LIMIT: 1_000_000n,
  SINGLE_SWAP_GAS_LIMIT: 500_000n,
  DEPOSIT_GAS_LIMIT: 1_500_000n,
  WITHDRAWAL_GAS_LIMIT: 1_500_000n,
  MIN_COLLATERAL_USD: usd30('1'),
  MIN_POSITION_SIZE_USD: usd30('1'),
  /** Seconds before an account may cancel its own market order (GMX: RequestNotYetCancellable). */
  REQUEST_EXPIRATION_TIME: 300n,
} as const;
