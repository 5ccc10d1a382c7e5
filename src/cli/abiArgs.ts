import { readFileSync } from 'node:fs';
import { encodeFunctionData, parseAbi, type Abi, type AbiFunction, type AbiParameter, type Hex } from 'viem';
import { CliError } from '../lib/args.ts';

/**
 * Calldata from a function and command-line arguments, so a person need not hand-encode: `--abi` is a
 * human-readable signature (`'function incrementBy(uint256 amount)'`, several separated by `;`) or a JSON file
 * (an ABI array, or an artifact with an `abi` field); `--function` names the function (an overload is picked
 * by argument count). Each argument is text, read by its ABI type: integers in decimal or 0x hex, `true`/`false`,
 * addresses and bytes as hex, strings as they are, arrays and tuples as JSON.
 */
export function encodeCall(abiSource: string, functionName: string, args: readonly string[]): Hex {
  const abi = loadAbi(abiSource);
  const candidates = abi.filter((x): x is AbiFunction => x.type === 'function' && x.name === functionName);
  if (candidates.length === 0) {
    const names = abi.filter((x): x is AbiFunction => x.type === 'function').map((f) => f.name);
    throw new CliError(`--function ${functionName} is not in the ABI (functions: ${[...new Set(names)].join(', ') || 'none'})`);
  }
  const fn = candidates.find((f) => f.inputs.length === args.length);
  if (!fn) {
    const arities = candidates.map((f) => `${f.name}(${f.inputs.map((i) => i.type).join(',')})`).join(', ');
    throw new CliError(`${functionName} takes ${candidates.map((f) => f.inputs.length).join(' or ')} arguments, got ${args.length}: ${arities}`);
  }
  const values = fn.inputs.map((input, i) => coerce(input, args[i]!, input.name || `argument ${i + 1}`));
  try {
    return encodeFunctionData({ abi: [fn], functionName: fn.name, args: values });
  } catch (e) {
    throw new CliError(`cannot encode ${fn.name}: ${(e as { shortMessage?: string }).shortMessage ?? (e as Error).message}`);
  }
}

function loadAbi(source: string): Abi {
  const trimmed = source.trim();
  if (/^(function|event|error|struct|constructor)\s/.test(trimmed)) {
    try {
      return parseAbi(trimmed.split(';').map((s) => s.trim()).filter((s) => s !== ''));
    } catch (e) {
      throw new CliError(`--abi is not a valid signature: ${(e as { shortMessage?: string }).shortMessage ?? (e as Error).message}`);
    }
  }
  let json: unknown;
  try {
    json = JSON.parse(readFileSync(trimmed, 'utf8'));
  } catch (e) {
    throw new CliError(`--abi must be a signature like 'function f(uint256)' or a JSON ABI file: ${(e as Error).message}`);
  }
  const abi = Array.isArray(json) ? json : (json as { abi?: unknown }).abi;
  if (!Array.isArray(abi)) throw new CliError(`--abi ${trimmed}: no ABI array in the file (neither the file nor its "abi" field)`);
  return abi as Abi;
}

/** One argument read by its ABI type (recursively for arrays and tuples given as JSON). */
function coerce(param: AbiParameter, raw: unknown, what: string): unknown {
  const type = param.type;
  const array = /^(.*)\[(\d*)\]$/.exec(type);
  if (array) {
    const items = typeof raw === 'string' ? parseJson(raw, what) : raw;
    if (!Array.isArray(items)) throw new CliError(`${what} must be a JSON array for ${type}`);
    return items.map((item, i) => coerce({ ...param, type: array[1]! }, item, `${what}[${i}]`));
  }
  if (type === 'tuple') {
    const value = typeof raw === 'string' ? parseJson(raw, what) : raw;
    const components = (param as { components?: readonly AbiParameter[] }).components ?? [];
    if (Array.isArray(value)) return components.map((c, i) => coerce(c, value[i], `${what}.${c.name ?? i}`));
    if (value && typeof value === 'object') {
      return Object.fromEntries(components.map((c, i) => [c.name ?? String(i), coerce(c, (value as Record<string, unknown>)[c.name ?? String(i)], `${what}.${c.name}`)]));
    }
    throw new CliError(`${what} must be a JSON array or object for a tuple`);
  }
  const text = typeof raw === 'string' ? raw : raw === undefined ? '' : typeof raw === 'object' ? JSON.stringify(raw) : String(raw);
  if (/^u?int\d*$/.test(type)) {
    if (!/^-?(0x[0-9a-fA-F]+|[0-9]+)$/.test(text)) throw new CliError(`${what} must be an integer (decimal or 0x hex) for ${type}, got ${JSON.stringify(text)}`);
    return text.startsWith('-') ? -BigInt(text.slice(1)) : BigInt(text);
  }
  if (type === 'bool') {
    if (!['true', 'false', '1', '0'].includes(text)) throw new CliError(`${what} must be true or false, got ${JSON.stringify(text)}`);
    return text === 'true' || text === '1';
  }
  if (type === 'address' || type.startsWith('bytes')) {
    if (!/^0x[0-9a-fA-F]*$/.test(text)) throw new CliError(`${what} must be 0x-prefixed hex for ${type}, got ${JSON.stringify(text)}`);
    return text;
  }
  return text; // string
}

function parseJson(raw: string, what: string): unknown {
  try {
    return JSON.parse(raw);
  } catch {
    throw new CliError(`${what} must be JSON, got ${JSON.stringify(raw)}`);
  }
}
