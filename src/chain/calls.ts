import { concatHex, encodeAbiParameters, getAddress, parseAbiParameters, isAddress, isHex, toFunctionSelector, type Address, type Hex } from 'viem';
import type { Call } from '../api/v1alpha1/index.ts';
import { ChainError } from './errors.ts';

/** A call with its value parsed: what the wallet executes. */
export interface WalletCall {
  target: Address;
  value: bigint;
  data: Hex;
}

/** Parses API calls (decimal-string values) into wallet calls; throws `invalid_operation` on bad input. */
export function toWalletCalls(calls: readonly Call[]): WalletCall[] {
  if (calls.length === 0) throw new ChainError('invalid_operation', 'at least one call is required');
  return calls.map((c, i) => {
    if (!isAddress(c.target, { strict: false })) throw new ChainError('invalid_operation', `call ${i}: invalid target ${c.target}`);
    if (!isHex(c.data, { strict: true }) || c.data.length % 2 !== 0) {
      throw new ChainError('invalid_operation', `call ${i}: calldata must be 0x-prefixed hex with whole bytes`);
    }
    if (!/^(0|[1-9][0-9]*)$/.test(c.value)) throw new ChainError('invalid_operation', `call ${i}: value must be a decimal integer`);
    return { target: getAddress(c.target), value: BigInt(c.value), data: c.data as Hex };
  });
}

/**
 * The wallet's calldata for `calls`: `execute(target, value, data)` for one call, otherwise SimpleAccount
 * v0.7 `executeBatch(dest[], value[], func[])`, with an empty value array when no call sends value (the
 * contract reads that as all zero, which saves gas).
 */
export function encodeWalletCallData(calls: readonly WalletCall[]): Hex {
  if (calls.length === 1) {
    const c = calls[0]!;
    return concatHex([EXECUTE.selector, encodeAbiParameters(EXECUTE.inputs, [c.target, c.value, c.data])]);
  }
  const anyValue = calls.some((c) => c.value !== 0n);
  return concatHex([
    EXECUTE_BATCH.selector,
    encodeAbiParameters(EXECUTE_BATCH.inputs, [
      calls.map((c) => c.target),
      anyValue ? calls.map((c) => c.value) : [],
      calls.map((c) => c.data),
    ]),
  ]);
}

export const totalValue = (calls: readonly WalletCall[]): bigint => calls.reduce((s, c) => s + c.value, 0n);

// Selectors computed once (viem's encodeFunctionData hashes the signature on every call: hot under load).
// The signatures are simpleAccountAbi's (abi.ts); calls.test.ts checks the encodings agree.
const EXECUTE = {
  selector: toFunctionSelector('function execute(address dest, uint256 value, bytes func)'),
  inputs: parseAbiParameters('address dest, uint256 value, bytes func'),
};
const EXECUTE_BATCH = {
  selector: toFunctionSelector('function executeBatch(address[] dest, uint256[] value, bytes[] func)'),
  inputs: parseAbiParameters('address[] dest, uint256[] value, bytes[] func'),
};
