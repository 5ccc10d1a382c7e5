import { CliError, parse } from '../lib/args.ts';

/** One option of a command, with the help line that documents it. */
export interface OptionSpec {
  type: 'string' | 'boolean';
  multiple?: boolean;
  short?: string;
  /** Shown in --help: what it does, its default and where else it can come from (an environment variable). */
  help: string;
  /** The value's placeholder in --help, e.g. `ID`. */
  arg?: string;
}

export type Options = Record<string, OptionSpec>;
export type ParsedValues = Record<string, string | boolean | string[] | boolean[] | undefined>;

/**
 * A command of the agents' CLI (`agent-wallet <name>`): its help and its run function. Commands are data, so
 * `--help` is uniform, and the protocol families add theirs from their registry.
 */
export interface Command {
  name: string;
  /** One line, for the top-level list. */
  summary: string;
  /** The synopsis after `agent-wallet `. */
  usage: string;
  /** What it does, when to use it, what comes back; a few lines. */
  description: string;
  options: Options;
  /** Complete command lines a reader can copy. */
  examples: string[];
  run(values: ParsedValues, positionals: string[]): Promise<number>;
}

/** The options every client command takes. */
export const COMMON_OPTIONS: Options = {
  json: { type: 'boolean', help: 'print JSON (one document; --watch prints one per state) instead of text' },
  'base-url': { type: 'string', arg: 'URL', help: 'the service (default: AGENT_WALLET_BASE_URL, else http://127.0.0.1:8080)' },
  help: { type: 'boolean', short: 'h', help: 'this help' },
};

/** Option sets merged; the same name twice is a programming error (one would silently hide the other). */
export function mergeOptions(...parts: Options[]): Options {
  const merged: Options = {};
  for (const part of parts) {
    for (const [name, spec] of Object.entries(part)) {
      if (name in merged || name in COMMON_OPTIONS) throw new Error(`option --${name} is declared twice`);
      merged[name] = spec;
    }
  }
  return merged;
}

export function helpText(c: Command): string {
  const options = Object.entries({ ...c.options, ...COMMON_OPTIONS });
  const flag = ([name, o]: [string, OptionSpec]) => `${o.short ? `-${o.short}, ` : ''}--${name}${o.arg ? ` ${o.arg}` : ''}`;
  const width = Math.max(...options.map((o) => flag(o).length)) + 2;
  return [
    `usage: agent-wallet ${c.usage}`,
    '',
    c.description,
    '',
    'options:',
    ...options.map((o) => `  ${flag(o).padEnd(width)}${o[1].help}`),
    '',
    'The API key comes from AGENT_WALLET_API_KEY (never a flag: shell histories keep flags).',
    '',
    c.examples.length > 1 ? 'examples:' : 'example:',
    ...c.examples.map((e) => `  ${e}`),
    '',
  ].join('\n');
}

/** Parses `argv` for `c` and runs it; `--help` prints its help instead. */
export async function runCommand(c: Command, argv: string[]): Promise<number> {
  const all = { ...c.options, ...COMMON_OPTIONS };
  const config = Object.fromEntries(
    Object.entries(all).map(([name, o]) => [name, { type: o.type, ...(o.multiple && { multiple: true }), ...(o.short && { short: o.short }) }]),
  );
  let parsed: ReturnType<typeof parse>;
  try {
    parsed = parse(argv, config as Parameters<typeof parse>[1]);
  } catch (e) {
    throw new CliError(`${(e as Error).message}\n\n${helpText(c)}`);
  }
  if (parsed.values.help === true) {
    process.stdout.write(helpText(c));
    return 0;
  }
  return c.run(parsed.values as ParsedValues, parsed.positionals);
}

/** A string option's value, or undefined. */
export const str = (v: ParsedValues, name: string): string | undefined => {
  const x = v[name];
  return typeof x === 'string' ? x : undefined;
};
export const bool = (v: ParsedValues, name: string): boolean => v[name] === true;
