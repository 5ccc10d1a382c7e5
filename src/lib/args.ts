/** Command-line parsing shared by every process entry point (src/cli and src/roles). */
import { resolve } from 'node:path';
import { parseArgs, type ParseArgsConfig } from 'node:util';

export class CliError extends Error {
  override readonly name = 'CliError';
}

/** node:util parseArgs, with usage errors turned into CliError (exit code 2, no stack trace). */
export function parse<T extends NonNullable<ParseArgsConfig['options']>>(args: string[], options: T) {
  try {
    return parseArgs({ args, options, allowPositionals: true, strict: true });
  } catch (e) {
    throw new CliError((e as Error).message);
  }
}

export const dataDirOption = { 'data-dir': { type: 'string' } } as const;

export function resolveDataDir(flag: string | undefined): string {
  return resolve(flag ?? process.env.AGENT_WALLET_DATA_DIR ?? '.data');
}
