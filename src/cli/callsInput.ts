import { readFile } from 'node:fs/promises';
import { CliError } from '../lib/args.ts';
import { encodeCall } from './abiArgs.ts';
import { str, type Options, type ParsedValues } from './command.ts';
import { agentIdOf, AGENT_OPTIONS } from './context.ts';

export const CALL_OPTIONS: Options = {
  ...AGENT_OPTIONS,
  to: { type: 'string', arg: 'ADDRESS', help: 'the contract to call (target_contract)' },
  data: { type: 'string', arg: 'HEX', help: 'ABI-encoded calldata, 0x-prefixed ("0x" for a plain transfer); or --abi and --function' },
  abi: { type: 'string', arg: 'SIG|FILE', help: "the function's signature ('function setNumber(uint256 n)') or a JSON ABI file; arguments follow the options" },
  function: { type: 'string', arg: 'NAME', help: 'the function of --abi to call (overloads are told apart by argument count)' },
  value: { type: 'string', arg: 'WEI', help: 'native amount sent with the call, in wei (default 0)' },
};

export const BATCH_OPTION: Options = {
  file: {
    type: 'string',
    arg: 'FILE|-',
    help: 'a batch from a JSON file, or stdin with -: an array of {target_contract, calldata, value}, or a whole request body (spec 2.4)',
  },
};

/** A request body as the API takes it (spec 2.4): the single-call or the batch shape. */
export type CallBody = Record<string, unknown> & { agent_id: string; chain: string };

/**
 * The body of an execute or a simulate from the command line: one call from --to with --data, or with --abi,
 * --function and the arguments (encoded here with viem); or, with --file, a batch (or a whole body) as JSON.
 * Values are passed as given: the API validates them and its 400 names the field.
 */
export async function callBodyOf(values: ParsedValues, positionals: readonly string[], stdin: () => Promise<string> = readStdin): Promise<CallBody> {
  const chain = str(values, 'chain');
  const file = str(values, 'file');
  if (file !== undefined) {
    if (str(values, 'to') !== undefined || str(values, 'data') !== undefined || str(values, 'abi') !== undefined) {
      throw new CliError('give either --file (a batch) or --to with --data/--abi (one call), not both');
    }
    const text = file === '-' ? await stdin() : await readFile(file, 'utf8').catch((e: Error) => {
      throw new CliError(`cannot read --file ${file}: ${e.message}`);
    });
    let json: unknown;
    try {
      json = JSON.parse(text);
    } catch (e) {
      throw new CliError(`--file ${file === '-' ? '(stdin)' : file} is not JSON: ${(e as Error).message}`);
    }
    const body: Record<string, unknown> = Array.isArray(json) ? { batch_calls: json } : (json as Record<string, unknown>);
    if (!body || typeof body !== 'object') throw new CliError('--file must hold a JSON array of calls or a request body object');
    const agent = str(values, 'agent-id') ?? (typeof body.agent_id === 'string' ? body.agent_id : undefined);
    return {
      ...body,
      agent_id: agent ?? agentIdOf(values),
      chain: chain ?? (typeof body.chain === 'string' ? body.chain : 'ethereum'),
    };
  }

  const to = str(values, 'to');
  if (to === undefined) throw new CliError('--to is required (or --file for a batch)');
  const data = str(values, 'data');
  const abi = str(values, 'abi');
  const fn = str(values, 'function');
  if (data !== undefined && abi !== undefined) throw new CliError('give --data or --abi with --function, not both');
  let calldata: string;
  if (abi !== undefined) {
    if (fn === undefined) throw new CliError('--abi needs --function NAME');
    calldata = encodeCall(abi, fn, positionals);
  } else {
    if (data === undefined) throw new CliError('--data is required (or --abi with --function and its arguments)');
    if (positionals.length > 0) throw new CliError(`unexpected arguments ${positionals.join(' ')} (arguments go with --abi and --function)`);
    calldata = data;
  }
  return {
    agent_id: agentIdOf(values),
    chain: chain ?? 'ethereum',
    target_contract: to,
    calldata,
    value: str(values, 'value') ?? '0',
  };
}

async function readStdin(): Promise<string> {
  const chunks: Buffer[] = [];
  for await (const chunk of process.stdin) chunks.push(chunk as Buffer);
  return Buffer.concat(chunks).toString('utf8');
}
