import { erc20Abi, getAddress, isAddress, type Address } from 'viem';
import { LENS_READ_TARGET, lensNativeBalanceAbi } from '../../chain/types.ts';
import type { TokenInfo } from './amounts.ts';
import { ProtocolError } from './errors.ts';
import { readOf, type Read } from './reads.ts';

/**
 * The token an input names among those the protocol lists here: by symbol (any letter case) or by address.
 * Anything else is 400 unknown_token naming the field and listing what the protocol takes.
 */
export function resolveToken(input: string, listed: readonly TokenInfo[], field: string, what = 'this protocol'): TokenInfo {
  const found = isAddress(input, { strict: false })
    ? listed.find((t) => t.address.toLowerCase() === input.toLowerCase())
    : listed.find((t) => t.symbol.toLowerCase() === input.toLowerCase());
  if (found) return found;
  const known = listed.map((t) => `${t.symbol} (${t.address})`).join(', ');
  throw new ProtocolError('unknown_token', `${input} is not a token of ${what}; it takes: ${known}`, { field });
}

/** The symbol and decimals of `address`, as two reads to batch with others. */
export function tokenInfoReads(address: Address): [Read<string>, Read<number>] {
  const a = getAddress(address);
  return [readOf({ address: a, abi: erc20Abi, functionName: 'symbol' }), readOf({ address: a, abi: erc20Abi, functionName: 'decimals' })];
}

export const balanceOfRead = (token: Address, owner: Address): Read<bigint> =>
  readOf({ address: token, abi: erc20Abi, functionName: 'balanceOf', args: [owner], label: `balanceOf(${owner}) on ${token}` });

/** In a simulation's observed reads only: the wallet's native coin, read by the simulation lens (LENS_READ_TARGET). */
export const nativeBalanceObservedRead = (owner: Address): Read<bigint> =>
  readOf({ address: LENS_READ_TARGET, abi: lensNativeBalanceAbi, functionName: 'nativeBalance', args: [owner], label: `native balance of ${owner}` });

export const allowanceRead = (token: Address, owner: Address, spender: Address): Read<bigint> =>
  readOf({ address: token, abi: erc20Abi, functionName: 'allowance', args: [owner, spender] });
