import { decodeErrorResult, type Hex } from 'viem';
import type { ProtocolRevert } from '../common/errors.ts';
import { swapErrorsAbi } from './abi.ts';

type Args = readonly unknown[];

/** What each error means, in words (from the NatSpec of the contracts that throw it). */
const MEANING: Readonly<Record<string, (a: Args) => string>> = {
  V4TooLittleReceived: (a) => `the swap would return ${a[1]}, less than the minimum ${a[0]} (amount_out_minimum): the price moved past the slippage allowed`,
  V4TooMuchRequested: (a) => `the swap would take ${a[1]}, more than the maximum ${a[0]} (amount_in_maximum): the price moved past the slippage allowed`,
  TransactionDeadlinePassed: () => 'the deadline passed before the swap was mined',
  AllowanceExpired: (a) => `the Permit2 allowance expired at ${a[0]} (the deadline)`,
  InsufficientAllowance: (a) => `the Permit2 allowance (${a[0]}) is less than the swap takes`,
  InsufficientETH: () => 'the router holds less ETH than the swap pays',
  InsufficientToken: () => 'the router holds less of the token than asked',
  InsufficientBalance: () => 'the wallet holds less than the swap pays',
  ContractLocked: () => 'the router was re-entered',
  LengthMismatch: () => 'the commands and their inputs differ in number',
  InvalidCommandType: (a) => `the router has no command ${a[0]}`,
  UnsupportedAction: (a) => `the V4Router has no action ${a[0]}`,
  InputLengthMismatch: () => 'the actions and their parameters differ in number',
  DeltaNotPositive: (a) => `nothing of ${a[0]} is owed to the router to take`,
  DeltaNotNegative: (a) => `nothing of ${a[0]} is owed by the router to settle`,
  SafeCastOverflow: () => 'an amount does not fit the type the pool uses',
  PoolNotInitialized: () => 'the pool is not initialized',
  CurrencyNotSettled: () => 'a currency was left unsettled at the end of the unlock',
  ManagerLocked: () => 'the PoolManager is locked',
  AlreadyUnlocked: () => 'the PoolManager is already unlocked',
  NonzeroNativeValue: () => 'ETH was sent to settle an ERC-20',
  SwapAmountCannotBeZero: () => 'the swap amount is zero',
  PriceLimitAlreadyExceeded: () => "the pool's price is already past the swap's price limit",
  PriceLimitOutOfBounds: () => 'the price limit is outside the valid range',
  InvalidFeeForExactOut: () => 'an exact-output swap through a pool whose fee is 100%',
  NativeTransferFailed: () => 'sending ETH failed (the recipient refused it)',
  ERC20TransferFailed: () => 'an ERC-20 transfer failed',
  HookCallFailed: () => "the pool's hook failed",
  NotEnoughLiquidity: (a) => `pool ${a[0]} cannot fill the amount`,
  BalanceTooLow: () => 'a balance check failed',
  InvalidEthSender: () => 'ETH came from an address other than the PoolManager or WETH',
};

/**
 * A revert of a swap through the UniversalRouter, decoded to its error: the router's own (slippage bounds, the
 * deadline), Permit2's and the PoolManager's. Wrappers are unwrapped to what caused them: ExecutionFailed (a
 * router command that failed, with its revert) and v4-core's WrappedError (a hook's or a token's revert).
 */
export function decodeUniswapV4Revert(data: Hex, depth = 0): ProtocolRevert | undefined {
  if (depth > 4) return undefined;
  let decoded: { errorName: string; args?: Args };
  try {
    decoded = decodeErrorResult({ abi: swapErrorsAbi, data });
  } catch {
    return undefined;
  }
  const args = decoded.args ?? [];
  if (decoded.errorName === 'ExecutionFailed') {
    const inner = decodeUniswapV4Revert(args[1] as Hex, depth + 1);
    return inner && { ...inner, message: `${inner.message} (router command ${args[0]})` };
  }
  if (decoded.errorName === 'WrappedError') {
    const inner = decodeUniswapV4Revert(args[2] as Hex, depth + 1);
    const where = `in a call to ${args[0]} (selector ${args[1]})`;
    return inner ? { ...inner, message: `${inner.message} ${where}` } : { name: 'WrappedError', message: `a call ${where} reverted with ${String(args[2]).slice(0, 10)}` };
  }
  const meaning = MEANING[decoded.errorName];
  return { name: decoded.errorName, message: meaning ? meaning(args) : decoded.errorName };
}

