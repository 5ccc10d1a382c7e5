import { BaseError, decodeErrorResult, isHex, slice, type Abi, type Hex } from 'viem';

/** A decoded revert: `reason` is for humans, `data` is the raw revert data, `selector` its first 4 bytes. */
export interface DecodedRevert {
  reason: string;
  data: Hex;
  selector?: Hex;
  /** Set for a custom error found in one of the ABIs given to {@link decodeRevert}. */
  errorName?: string;
}

const ERROR_STRING_SELECTOR = '0x08c379a0';
const PANIC_SELECTOR = '0x4e487b71';

/** Solidity's panic codes (docs: "Panic via assert and Error via require"). */
const PANIC_REASONS: Record<number, string> = {
  0x00: 'generic compiler panic',
  0x01: 'assertion failed',
  0x11: 'arithmetic overflow or underflow',
  0x12: 'division or modulo by zero',
  0x21: 'invalid enum value',
  0x22: 'invalid storage byte array encoding',
  0x31: 'pop on an empty array',
  0x32: 'array index out of bounds',
  0x41: 'out of memory',
  0x51: 'call to an uninitialized internal function',
};

/**
 * Decodes revert data: `Error(string)` gives its message, `Panic(uint256)` a description of the code, a custom
 * error known to one of `abis` its name and arguments, anything else `custom error 0x<selector>` with the raw
 * data kept. Empty data is a revert without a reason (a bare `revert()`, an out-of-gas or a failed value send).
 *
 * @example
 * decodeRevert('0x08c379a0…').reason // 'Counter: forced failure'
 */
export function decodeRevert(data: Hex, abis: readonly Abi[] = []): DecodedRevert {
  if (data === '0x' || data.length < 10) {
    return { reason: data === '0x' ? 'reverted without a reason' : `malformed revert data ${data}`, data };
  }
  const selector = slice(data, 0, 4);
  if (selector === ERROR_STRING_SELECTOR || selector === PANIC_SELECTOR) {
    try {
      const decoded = decodeErrorResult({ data });
      if (decoded.errorName === 'Error') return { reason: String(decoded.args[0]), data, selector };
      const code = Number(decoded.args[0]);
      const what = PANIC_REASONS[code] ?? 'unknown panic code';
      return { reason: `panic 0x${code.toString(16).padStart(2, '0')}: ${what}`, data, selector };
    } catch {
      return { reason: `undecodable ${selector === PANIC_SELECTOR ? 'Panic' : 'Error'} revert ${data}`, data, selector };
    }
  }
  for (const abi of abis) {
    try {
      const decoded = decodeErrorResult({ abi, data });
      const args = (decoded.args ?? []).map(formatArg).join(', ');
      return { reason: `${decoded.errorName}(${args})`, data, selector, errorName: decoded.errorName };
    } catch {
      // not in this ABI
    }
  }
  return { reason: `custom error ${selector}`, data, selector };
}

function formatArg(a: unknown): string {
  if (typeof a === 'string') return isHex(a) ? a : JSON.stringify(a);
  if (typeof a === 'bigint') return a.toString();
  return String(a);
}

/**
 * Finds revert data in an error thrown by a viem call (it sits somewhere in the cause chain, as `data` on the
 * JSON-RPC error). Undefined when the error carries none.
 */
export function extractRevertData(error: unknown): Hex | undefined {
  let e: unknown = error;
  for (let depth = 0; e && depth < 12; depth++) {
    const d = (e as { data?: unknown }).data;
    if (typeof d === 'string' && isHex(d)) return d;
    if (d && typeof d === 'object' && typeof (d as { data?: unknown }).data === 'string') {
      const inner = (d as { data: string }).data;
      if (isHex(inner)) return inner;
    }
    const raw = (e as { raw?: unknown }).raw;
    if (typeof raw === 'string' && isHex(raw)) return raw;
    e = (e as { cause?: unknown }).cause;
  }
  return undefined;
}

/**
 * True when the node executed the call and it reverted (as opposed to the node failing to answer). JSON-RPC
 * code 3 is "execution reverted" with data; -32000/-32015 with a revert message are seen from some nodes.
 */
export function isExecutionRevert(error: unknown): boolean {
  if (extractRevertData(error) !== undefined) return true;
  let e: unknown = error;
  for (let depth = 0; e && depth < 12; depth++) {
    const name = (e as { name?: unknown }).name;
    if (name === 'ExecutionRevertedError' || name === 'ContractFunctionRevertedError') return true;
    const code = (e as { code?: unknown }).code;
    const message = String((e as { message?: unknown }).message ?? '');
    if (code === 3) return true;
    if ((code === -32000 || code === -32015) && /revert/i.test(message)) return true;
    e = (e as { cause?: unknown }).cause;
  }
  return false;
}

/** A one-line description of an error for logs and failure messages. */
export function describeError(error: unknown): string {
  if (error instanceof BaseError) return error.shortMessage || error.message;
  if (error instanceof Error) return error.message;
  return String(error);
}
