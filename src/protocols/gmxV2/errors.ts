import { decodeErrorResult, type Hex } from 'viem';
import type { ProtocolRevert } from '../common/errors.ts';
import { customErrorsAbi } from './abis.generated.ts';

/** What the GMX errors an agent most often meets mean, in words; every other error is named with its arguments. */
const MEANINGS: Readonly<Record<string, string>> = {
  OrderNotFulfillableAtAcceptablePrice: 'the execution price would be worse than the acceptable price (the price moved past the slippage allowed)',
  InsufficientExecutionFee: 'the execution fee is below what the keeper needs at the current gas price',
  InsufficientCollateralUsd: 'the collateral left would not cover the position (leverage too high, or the loss and fees too large)',
  InsufficientCollateralAmount: 'the collateral left would be below zero after the loss and fees',
  LiquidatablePosition: 'the position would be liquidatable after the order',
  MinPositionSize: 'the position would be below the market’s minimum size',
  InvalidDecreaseOrderSize: 'the decrease is larger than the position',
  EmptyPosition: 'there is no such position to decrease',
  MaxOpenInterestExceeded: 'the market’s open interest cap would be exceeded',
  InsufficientReserve: 'the pool cannot back that much open interest',
  InsufficientReserveForOpenInterest: 'the pool cannot back that much open interest',
  MaxPoolAmountExceeded: 'the pool’s cap would be exceeded',
  EmptyOrder: 'no such order',
  Unauthorized: 'the caller is not allowed to do that',
  DisabledMarket: 'the market is disabled',
  InvalidMarket: 'no such market',
  EmptyMarket: 'no such market',
  EndOfOracleSimulation: 'the simulated execution succeeded',
};

/** A GMX custom error (CustomErrors.sol, from the SDK's ABI) by name, with its arguments and what it means. */
export function decodeGmxRevert(data: Hex): ProtocolRevert | undefined {
  try {
    const decoded = decodeErrorResult({ abi: customErrorsAbi, data });
    const args = (decoded.args ?? []) as readonly unknown[];
    const inputs = customErrorsAbi.find((e) => e.name === decoded.errorName)?.inputs ?? [];
    const shown = args.map((a, i) => `${inputs[i]?.name ?? i}=${typeof a === 'bigint' ? a.toString() : String(a)}`).join(', ');
    const meaning = MEANINGS[decoded.errorName];
    return { name: decoded.errorName, message: meaning ? (shown ? `${meaning} (${shown})` : meaning) : shown ? `${decoded.errorName}(${shown})` : decoded.errorName };
  } catch {
    return undefined;
  }
}
