import { applyFactor, BASIS_POINTS } from './units.ts';

/**
 * The DataStore's execution-fee settings (src/protocols/gmxV2/marketParams.ts reads them): the keeper's gas for each
 * request type, and how GasUtils turns an estimate into the minimum fee a request must carry.
 */
export interface ExecutionFeeParams {
  /** ESTIMATED_GAS_FEE_BASE_AMOUNT_V2_1: gas every execution costs. */
  estimatedGasFeeBaseAmount: bigint;
  /** ESTIMATED_GAS_FEE_PER_ORACLE_PRICE: gas per price the keeper sets. */
  estimatedGasFeePerOraclePrice: bigint;
  /** ESTIMATED_GAS_FEE_MULTIPLIER_FACTOR, 30-decimal. */
  estimatedGasFeeMultiplierFactor: bigint;
  increaseOrderGasLimit: bigint;
  decreaseOrderGasLimit: bigint;
  swapOrderGasLimit: bigint;
  singleSwapGasLimit: bigint;
  depositGasLimit: bigint;
  withdrawalGasLimit: bigint;
}

export interface OrderGasInputs {
  /** Markets in the order's swap path. */
  swapsCount?: number;
  callbackGasLimit?: bigint;
}

/** GasUtils.estimateExecuteIncreaseOrderGasLimit: the order's gas, a swap's per hop, and the callback's. */
export function increaseOrderGasLimit(p: ExecutionFeeParams, o: OrderGasInputs = {}): bigint {
  return p.increaseOrderGasLimit + p.singleSwapGasLimit * BigInt(o.swapsCount ?? 0) + (o.callbackGasLimit ?? 0n);
}

/** GasUtils.estimateExecuteDecreaseOrderGasLimit: as an increase, one more swap when the PnL token is swapped to the collateral. */
export function decreaseOrderGasLimit(p: ExecutionFeeParams, o: OrderGasInputs & { swapsPnlToken?: boolean } = {}): bigint {
  const swaps = BigInt(o.swapsCount ?? 0) + (o.swapsPnlToken ? 1n : 0n);
  return p.decreaseOrderGasLimit + p.singleSwapGasLimit * swaps + (o.callbackGasLimit ?? 0n);
}

/** Prices an order's execution needs the keeper to set: index, long and short token, one per swap hop. */
export const orderOraclePriceCount = (swapsCount = 0): bigint => 3n + BigInt(swapsCount);

/**
 * The gas limit the fee is checked against (GasUtils.adjustGasLimitForEstimate): the base amount, the oracle
 * prices' gas, and the estimate scaled by the multiplier.
 */
export function adjustedGasLimit(p: ExecutionFeeParams, estimatedGasLimit: bigint, oraclePriceCount: bigint): bigint {
  const base = p.estimatedGasFeeBaseAmount + p.estimatedGasFeePerOraclePrice * oraclePriceCount;
  return base + applyFactor(estimatedGasLimit, p.estimatedGasFeeMultiplierFactor);
}

export interface ExecutionFee {
  gasLimit: bigint;
  /** The minimum fee at this gas price, in the native token's smallest unit (paid as WNT through sendWnt). */
  feeAmount: bigint;
}

/** The minimum execution fee at `gasPrice` (wei per gas), as the SDK's getExecutionFee (no min-USD floor on Arbitrum). */
export function executionFee(p: ExecutionFeeParams, estimatedGasLimit: bigint, gasPrice: bigint, oraclePriceCount: bigint): ExecutionFee {
  const gasLimit = adjustedGasLimit(p, estimatedGasLimit, oraclePriceCount);
  return { gasLimit, feeAmount: gasLimit * gasPrice };
}

/**
 * The fee plus `bufferBps` of headroom, rounded up: the contracts compare it with the gas price of the block that
 * creates the order, which can rise after signing; the keeper refunds what execution does not use.
 */
export const withFeeBuffer = (feeAmount: bigint, bufferBps: number): bigint => (feeAmount * (BASIS_POINTS + BigInt(bufferBps)) + BASIS_POINTS - 1n) / BASIS_POINTS;
