import { decodeErrorResult, size, slice, toFunctionSelector, type Hex } from 'viem';
import type { ProtocolRevert } from '../common/errors.ts';
import { AAVE_ERROR_CODES } from './errorCodes.generated.ts';

/**
 * Aave v3's releases up to 3.1 revert with a number (`Error("36")`), named in Errors.sol; 3.2 and later revert
 * with custom errors of the same names in CamelCase (`CollateralCannotCoverNewBorrow()`). Both decode to the name.
 */
const CUSTOM_ERRORS = new Map(
  Object.entries(AAVE_ERROR_CODES).map(([code, e]) => {
    const camel = e.name.toLowerCase().replace(/(^|_)([a-z0-9])/g, (_, __, c: string) => c.toUpperCase());
    return [toFunctionSelector(`function ${camel}()`), { code, ...e }] as const;
  }),
);

export function decodeAaveRevert(data: Hex): ProtocolRevert | undefined {
  try {
    const decoded = decodeErrorResult({ data });
    if (decoded.errorName === 'Error') {
      const code = String(decoded.args[0]);
      const known = AAVE_ERROR_CODES[code];
      return known ? { name: known.name, code, message: known.message } : undefined;
    }
  } catch {
    // not Error(string): perhaps a custom error of a later release
  }
  if (size(data) !== 4) return undefined;
  const known = CUSTOM_ERRORS.get(slice(data, 0, 4));
  return known ? { name: known.name, code: known.code, message: known.message } : undefined;
}
