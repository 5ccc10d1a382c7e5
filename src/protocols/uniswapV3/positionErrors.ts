import { decodeErrorResult, type Hex } from 'viem';
import type { ProtocolRevert } from '../common/errors.ts';

/**
 * The revert strings of a liquidity action: NonfungiblePositionManager and its periphery bases (v3-periphery
 * 1.4.4), and the pool it calls (v3-core 1.0.1), which reverts with short codes. Keyed by the string; the name is
 * ours (the contracts have none), the meaning what the source's check says.
 */
export const POSITION_MANAGER_REVERTS: Readonly<Record<string, { name: string; meaning: string }>> = {
  'Price slippage check': { name: 'PRICE_SLIPPAGE_CHECK', meaning: 'the tokens added or removed fell below amount0_min / amount1_min: the price moved past the slippage allowed' },
  'Transaction too old': { name: 'TRANSACTION_TOO_OLD', meaning: 'the deadline passed before the transaction was mined' },
  'Not approved': { name: 'NOT_APPROVED', meaning: 'the caller neither owns the position NFT nor is approved for it' },
  'Invalid token ID': { name: 'INVALID_TOKEN_ID', meaning: 'no position has that token id' },
  'Not cleared': { name: 'NOT_CLEARED', meaning: 'a position can be burned only once its liquidity and owed tokens are zero' },
  STF: { name: 'SAFE_TRANSFER_FROM_FAILED', meaning: "the manager could not pull a token from the wallet (balance or allowance too low)" },
  ST: { name: 'SAFE_TRANSFER_FAILED', meaning: 'a token transfer out failed' },
  STE: { name: 'SAFE_TRANSFER_ETH_FAILED', meaning: 'sending ETH failed' },
  TLU: { name: 'TICK_LOWER_NOT_BELOW_UPPER', meaning: 'the range’s lower tick is not below its upper tick' },
  TLM: { name: 'TICK_LOWER_TOO_LOW', meaning: 'the lower tick is below the minimum tick' },
  TUM: { name: 'TICK_UPPER_TOO_HIGH', meaning: 'the upper tick is above the maximum tick' },
  LO: { name: 'LIQUIDITY_OVERFLOW', meaning: 'the ticks would hold more liquidity than the pool allows per tick' },
  M0: { name: 'MINT_TOKEN0_NOT_PAID', meaning: 'the pool did not receive the token0 the mint owed' },
  M1: { name: 'MINT_TOKEN1_NOT_PAID', meaning: 'the pool did not receive the token1 the mint owed' },
  LOK: { name: 'POOL_LOCKED', meaning: 'the pool was re-entered' },
  T: { name: 'TICK_OUT_OF_RANGE', meaning: 'a tick outside [-887272, 887272]' },
  'ERC721: owner query for nonexistent token': { name: 'NONEXISTENT_TOKEN', meaning: 'no position NFT has that token id' },
  'ERC721: operator query for nonexistent token': { name: 'NONEXISTENT_TOKEN', meaning: 'no position NFT has that token id' },
};

/** A position manager's (or its pool's) Error(string) by our name for it, with what it means; else undefined. */
export function decodePositionManagerRevert(data: Hex): ProtocolRevert | undefined {
  try {
    const decoded = decodeErrorResult({ data });
    if (decoded.errorName !== 'Error') return undefined;
    const message = String(decoded.args[0]);
    const known = POSITION_MANAGER_REVERTS[message];
    return known ? { name: known.name, code: message, message: known.meaning } : undefined;
  } catch {
    return undefined;
  }
}
