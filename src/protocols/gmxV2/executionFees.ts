import { formatUnits } from 'viem';
import { ProtocolError } from '../common/errors.ts';
import type { AgentContext } from '../types.ts';
import type { GmxV2Config } from './config.ts';
import { executionFeeParamsOf, executionFeeReads } from './marketParams.ts';
import { decreaseOrderGasLimit, executionFee, increaseOrderGasLimit, orderOraclePriceCount, withFeeBuffer, type ExecutionFeeParams } from './math/executionFee.ts';

/** What the keeper executes: each has its gas limit in the DataStore (GasUtils' estimateExecute…GasLimit, no swaps, no callback). */
export type KeeperRequest = 'increase' | 'decrease' | 'deposit' | 'withdrawal';

const GAS_LIMIT: Readonly<Record<KeeperRequest, (p: ExecutionFeeParams) => bigint>> = {
  increase: (p) => increaseOrderGasLimit(p),
  decrease: (p) => decreaseOrderGasLimit(p),
  deposit: (p) => p.depositGasLimit,
  withdrawal: (p) => p.withdrawalGasLimit,
};

/**
 * The execution fee a request carries: the caller's (a bound the first plan fixed), never below what the keeper
 * needs at the current gas price (refused with the figure: the contracts would revert InsufficientExecutionFee); by
 * default that need plus the configured headroom. Orders, deposits and withdrawals all need three oracle prices
 * without swaps (GasUtils' estimate…OraclePriceCount).
 */
export async function chargedExecutionFee(ctx: AgentContext<'gmxV2'>, request: KeeperRequest, given: string | undefined): Promise<bigint> {
  const config = ctx.config as GmxV2Config;
  const [values, fees] = await Promise.all([ctx.read(executionFeeReads(config.dataStore)), ctx.fees()]);
  const params = executionFeeParamsOf(values as bigint[]);
  const needed = executionFee(params, GAS_LIMIT[request](params), fees.maxFeePerGas, orderOraclePriceCount()).feeAmount;
  const fee = given !== undefined ? BigInt(given) : withFeeBuffer(needed, config.executionFeeBufferBps);
  if (fee < needed) {
    throw new ProtocolError('execution_fee_too_low', `execution_fee ${formatUnits(fee, 18)} ETH is below the ${formatUnits(needed, 18)} ETH GMX's keeper needs at the current gas price`, {
      field: 'execution_fee',
      details: { needed: needed.toString() },
    });
  }
  return fee;
}
