import { decodeErrorResult, type Hex } from 'viem';
import type { ProtocolRevert } from '../common/errors.ts';
import { MORPHO_ERROR_MESSAGES } from './errorMessages.generated.ts';

/** Morpho Blue's revert (an Error(string) of ErrorsLib) by the constant's name, with when it is thrown. */
export function decodeMorphoRevert(data: Hex): ProtocolRevert | undefined {
  try {
    const decoded = decodeErrorResult({ data });
    if (decoded.errorName !== 'Error') return undefined;
    const message = String(decoded.args[0]);
    const known = MORPHO_ERROR_MESSAGES[message];
    return known ? { name: known.name, code: message, message: known.meaning.replace(/^Thrown when /, '') } : undefined;
  } catch {
    return undefined;
  }
}
