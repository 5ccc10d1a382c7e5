import { decodeErrorResult, type Hex } from 'viem';
import type { ProtocolRevert } from '../common/errors.ts';

/**
 * Uniswap v3 reverts with short strings (v3-core's pool, v3-periphery's and SwapRouter02's libraries): each by a
 * name and what it means for the caller. The router's bounds first: they are what a swap's slippage and deadline hit.
 */
export const V3_REVERTS: Readonly<Record<string, { name: string; message: string }>> = {
  'Too little received': { name: 'TooLittleReceived', message: 'the swap would return less than amount_out_minimum (the price moved past the slippage allowed)' },
  'Too much requested': { name: 'TooMuchRequested', message: 'the swap would cost more than amount_in_maximum (the price moved past the slippage allowed)' },
  'Transaction too old': { name: 'TransactionTooOld', message: 'the deadline has passed' },
  SPL: { name: 'SqrtPriceLimit', message: 'the price limit is already past the current price' },
  STF: { name: 'SafeTransferFromFailed', message: 'the router could not take the input token (balance or allowance too low)' },
  ST: { name: 'SafeTransferFailed', message: 'a token transfer out failed' },
  STE: { name: 'SafeTransferETHFailed', message: 'sending ETH failed' },
  'Insufficient WETH9': { name: 'InsufficientWETH9', message: 'less WETH than the minimum to unwrap' },
  AS: { name: 'AmountSpecifiedZero', message: 'the swap amount is zero' },
  IIA: { name: 'InsufficientInputAmount', message: 'the pool was paid less than the swap needs' },
  LOK: { name: 'Locked', message: 'the pool is locked (re-entered)' },
  'Unexpected error': { name: 'UnexpectedError', message: 'the quoter met an unexpected revert' },
};

/** A v3 revert (an Error(string) of the pool, router or position manager) by its name, with what it means. */
export function decodeV3Revert(data: Hex, extra: Readonly<Record<string, { name: string; message: string }>> = {}): ProtocolRevert | undefined {
  try {
    const decoded = decodeErrorResult({ data });
    if (decoded.errorName !== 'Error') return undefined;
    const reason = String(decoded.args[0]);
    const known = V3_REVERTS[reason] ?? extra[reason];
    return known ? { name: known.name, code: reason, message: known.message } : undefined;
  } catch {
    return undefined;
  }
}
