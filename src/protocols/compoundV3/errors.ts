import { decodeErrorResult, type Hex } from 'viem';
import type { ProtocolRevert } from '../common/errors.ts';
import { cometAbi } from './abi.ts';

/** What Comet's custom errors mean for a caller (CometMainInterface; only those a lending call can meet). */
const MEANINGS: Readonly<Record<string, string>> = {
  NotCollateralized: 'the borrow would exceed what the collateral allows: supply more collateral, or borrow less (GET .../borrow-capacity)',
  BorrowTooSmall: "a borrow must be at least the market's base_borrow_min (GET .../markets)",
  SupplyCapExceeded: "the collateral's supply cap would be exceeded",
  BadAsset: 'the market does not take this asset',
  BadPrice: "the asset's price feed gave no usable price",
  Paused: 'this action is paused on the market',
  InsufficientReserves: 'the market has too little of the base token for this',
  TransferInFailed: 'the token transfer into the market failed (balance or allowance)',
  TransferOutFailed: 'the token transfer out of the market failed',
};

/** Comet's revert data as its custom error, by name, with what it means; undefined for anything else. */
export function decodeCometRevert(data: Hex): ProtocolRevert | undefined {
  try {
    const { errorName } = decodeErrorResult({ abi: cometAbi, data });
    return { name: errorName, message: MEANINGS[errorName] ?? `Comet refused the call: ${errorName}` };
  } catch {
    return undefined;
  }
}
