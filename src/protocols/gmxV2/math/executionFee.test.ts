import { describe, expect, it } from 'vitest';
import { zeroAddress } from 'viem';
import { prng, sdk, type Prng } from '../../../../test/support/gmxSdkOracle.ts';
import { adjustedGasLimit, decreaseOrderGasLimit, executionFee, increaseOrderGasLimit, orderOraclePriceCount, withFeeBuffer, type ExecutionFeeParams } from './executionFee.ts';

// Compared exactly with the SDK's utils/fees/executionFee.js (estimateExecuteIncreaseOrderGasLimit,
// estimateExecuteDecreaseOrderGasLimit, getExecutionFee) and estimateOraclePriceCount.js.
const CASES = 2_000;
const ARBITRUM = 42161;

function randomParams(r: Prng): ExecutionFeeParams {
  const gas = () => BigInt(r.int(0, 5_000_000));
  return {
    estimatedGasFeeBaseAmount: gas(),
    estimatedGasFeePerOraclePrice: BigInt(r.int(0, 100_000)),
    estimatedGasFeeMultiplierFactor: r.factor(0.5, 3),
    increaseOrderGasLimit: gas(),
    decreaseOrderGasLimit: gas(),
    swapOrderGasLimit: gas(),
    singleSwapGasLimit: gas(),
    depositGasLimit: gas(),
    withdrawalGasLimit: gas(),
  };
}

/** The SDK's GasLimitsConfig for the same params (its own field names). */
const sdkGasLimits = (p: ExecutionFeeParams) => ({
  ...p,
  increaseOrder: p.increaseOrderGasLimit,
  decreaseOrder: p.decreaseOrderGasLimit,
  swapOrder: p.swapOrderGasLimit,
  singleSwap: p.singleSwapGasLimit,
  depositToken: p.depositGasLimit,
  withdrawalMultiToken: p.withdrawalGasLimit,
  estimatedFeeMultiplierFactor: p.estimatedGasFeeMultiplierFactor,
});

describe('execution fee, against the SDK', () => {
  it('order gas limits match estimateExecuteIncreaseOrderGasLimit / estimateExecuteDecreaseOrderGasLimit', () => {
    const r = prng(40);
    const { DecreasePositionSwapType } = sdk.orders;
    for (let i = 0; i < CASES; i++) {
      const p = randomParams(r);
      const limits = sdkGasLimits(p);
      const swapsCount = r.int(0, 3);
      const callbackGasLimit = r.bool() ? 0n : BigInt(r.int(0, 2_000_000));
      const swapsPnlToken = r.bool();
      expect(increaseOrderGasLimit(p, { swapsCount, callbackGasLimit }), `case ${i}`).toBe(sdk.fees.estimateExecuteIncreaseOrderGasLimit(limits, { swapsCount, callbackGasLimit }));
      expect(decreaseOrderGasLimit(p, { swapsCount, callbackGasLimit, swapsPnlToken })).toBe(
        sdk.fees.estimateExecuteDecreaseOrderGasLimit(limits, {
          swapsCount,
          callbackGasLimit,
          decreaseSwapType: swapsPnlToken ? DecreasePositionSwapType.SwapPnlTokenToCollateralToken : DecreasePositionSwapType.NoSwap,
        }),
      );
      expect(orderOraclePriceCount(swapsCount)).toBe(sdk.fees.estimateOrderOraclePriceCount(swapsCount));
    }
  });

  it('executionFee matches getExecutionFee (gas limit and fee amount) at gas prices from 0.01 to 100 gwei', () => {
    const r = prng(41);
    for (let i = 0; i < CASES; i++) {
      const p = randomParams(r);
      const estimated = increaseOrderGasLimit(p, { swapsCount: r.int(0, 2) });
      const gasPrice = r.logBig(10_000_000n, 100_000_000_000n);
      const priceCount = orderOraclePriceCount(r.int(0, 3));
      const ethUsd = BigInt(r.int(500, 10_000)) * 10n ** 30n;
      const tokensData = { [zeroAddress]: { address: zeroAddress, decimals: 18, prices: { minPrice: ethUsd, maxPrice: ethUsd } } };
      const theirs = sdk.fees.getExecutionFee(ARBITRUM, sdkGasLimits(p), tokensData, estimated, gasPrice, priceCount);
      const ours = executionFee(p, estimated, gasPrice, priceCount);
      expect(ours, `case ${i}`).toEqual({ gasLimit: theirs.gasLimit, feeAmount: theirs.feeTokenAmount });
      expect(adjustedGasLimit(p, estimated, priceCount)).toBe(theirs.gasLimit);
    }
  });

  it('withFeeBuffer adds the buffer and rounds up', () => {
    expect(withFeeBuffer(1_000_000n, 3_000)).toBe(1_300_000n);
    expect(withFeeBuffer(1n, 3_000)).toBe(2n);
    expect(withFeeBuffer(10_000n, 0)).toBe(10_000n);
    expect(withFeeBuffer(0n, 3_000)).toBe(0n);
  });
});
