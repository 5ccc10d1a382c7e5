import { encodeFunctionData, erc20Abi, maxUint256, type Abi, type Address, type ContractFunctionArgs, type ContractFunctionName } from 'viem';
import type { Call } from '../../api/v1alpha1/index.ts';

/** One call of an action's batch, encoded with viem against `abi`. */
export function callOf<const abi extends Abi, fn extends ContractFunctionName<abi, 'nonpayable' | 'payable'>>(p: {
  address: Address;
  abi: abi;
  functionName: fn;
  args: ContractFunctionArgs<abi, 'nonpayable' | 'payable', fn>;
  value?: bigint;
}): Call {
  return {
    target: p.address,
    data: encodeFunctionData({ abi: p.abi, functionName: p.functionName, args: p.args } as never),
    value: (p.value ?? 0n).toString(),
  };
}

export const approveCall = (token: Address, spender: Address, amount: bigint): Call =>
  callOf({ address: token, abi: erc20Abi, functionName: 'approve', args: [spender, amount] });

/**
 * `action` with the allowance it needs, in the same batch (one UserOperation, atomic): approve exactly `amount`
 * (the protocol pulls it all, so nothing is left approved); for an amount only the chain knows at execution
 * (repay everything: the debt grows every second), approve without limit and take it back after the action.
 * Both forms depend on the input only, not on state read now: a retry with the same Idempotency-Key builds the
 * same calls.
 */
export function withApproval(token: Address, spender: Address, amount: bigint | 'unbounded', action: Call | Call[]): Call[] {
  const calls = Array.isArray(action) ? action : [action];
  if (amount !== 'unbounded') return [approveCall(token, spender, amount), ...calls];
  return [approveCall(token, spender, maxUint256), ...calls, approveCall(token, spender, 0n)];
}
