import { z } from 'zod';
import type { PayableCall } from '../../client/payAndResubmit.ts';
import { flatObject } from '../../protocols/common/inputs.ts';
import { FAMILIES, SPEC_PROTOCOLS } from '../../protocols/index.ts';
import type { AnyFamily, AnyEndpoint } from '../../protocols/types.ts';
import { bool, mergeOptions, type Command, type Options } from '../command.ts';
import { clientContext, PAYER_OPTIONS } from '../context.ts';
import { printError, printJson, table } from '../output.ts';
import { renderBlock } from '../render.ts';
import { submitAndReport, WAIT_OPTIONS } from './execute.ts';

type Any = any; // eslint-disable-line @typescript-eslint/no-explicit-any -- endpoints of every schema

const kebab = (field: string) => field.replace(/_/g, '-');

/** The description a field's schema carries, through its optional and pipe wrappers. */
function describe(schema: z.ZodType): string {
  for (let s: z.ZodType | undefined = schema, depth = 0; s && depth < 6; depth++) {
    const description = s.meta()?.description;
    if (typeof description === 'string') return description;
    const def = s.def as { innerType?: z.ZodType; out?: z.ZodType; in?: z.ZodType };
    s = def.innerType ?? def.out ?? def.in;
  }
  return '';
}

/** The options of an endpoint: one per field of its input (kebab-case), described by the schema itself. */
function fieldOptions(input: z.ZodType): Options {
  const shape = flatObject(input).shape as Record<string, z.ZodType>;
  return Object.fromEntries(
    Object.entries(shape).map(([field, schema]) => [kebab(field), { type: 'string' as const, arg: field.toUpperCase(), help: describe(schema).split(/\.\s+(?=[A-Z])/)[0] || field }]),
  );
}

/**
 * What the command line gives, as the endpoint's fields (only those given: the API validates the rest). In a body,
 * a field the API takes as a JSON number (slippage_bps) is sent as one when it reads as one.
 */
function fieldsOf(input: z.ZodType, values: Record<string, unknown>, body = false): Record<string, string | number> {
  const shape = flatObject(input).shape as Record<string, z.ZodType>;
  return Object.fromEntries(
    Object.entries(shape).flatMap(([f, schema]) => {
      const v = values[kebab(f)];
      if (typeof v !== 'string') return [];
      return [[f, body && takesNumber(schema) && /^-?[0-9]+(?:\.[0-9]+)?$/.test(v) ? Number(v) : v]];
    }),
  );
}

const takesNumber = (schema: z.ZodType): boolean => {
  const t = (z.toJSONSchema(schema, { io: 'input', unrepresentable: 'any' }) as { type?: unknown }).type;
  return t === 'integer' || t === 'number';
};

/**
 * A read's command word: its path, or `list-<path>` where an action of the family has the same path (perp-v2's
 * GET /orders lists what POST /orders creates).
 */
const readWord = (family: AnyFamily, e: AnyEndpoint<never>): string =>
  family.endpoints.some((x) => x.kind === 'action' && x.path === e.path) ? `list-${e.path}` : e.path;

function endpointCommand(family: AnyFamily, e: AnyEndpoint<never>): Command {
  const word = e.kind === 'read' ? readWord(family, e) : e.path;
  const example = e.kind === 'read' ? `agent-wallet ${family.slug} ${word} --agent-id my-agent` : `agent-wallet ${family.slug} ${e.path} --agent-id my-agent ${exampleArgs(family, e.path)}`;
  if (e.kind === 'read') {
    const post = e.method === 'POST';
    return {
      name: `${family.slug} ${word}`,
      summary: e.summary,
      usage: `${family.slug} ${word} [options]`,
      description: `${e.description}\n(${family.protocol} on ${family.chains.join(', ')}: ${post ? 'POST' : 'GET'} /protocols/${family.slug}/${e.path}; also under ${family.aliases.join(', ')})`,
      options: fieldOptions(e.query),
      examples: e.agent ? [example] : [`agent-wallet ${family.slug} ${word}`],
      async run(values) {
        const { client, json } = clientContext(values);
        const r = post
          ? await client.protocols.compute(family.slug, e.path, fieldsOf(e.query, values, true))
          : await client.protocols.read(family.slug, e.path, fieldsOf(e.query, values) as Record<string, string>);
        if (!r.ok) return printError(r.error, json);
        if (json) printJson(r.value);
        else process.stdout.write(renderBlock(r.value));
        return 0;
      },
    };
  }
  return {
    name: `${family.slug} ${e.path}`,
    summary: e.summary,
    usage: `${family.slug} ${e.path} --agent-id ID [fields] [--simulate | --wait] [--pay ...] [--json]`,
    description:
      `${e.description}\n--simulate shows the calls and what they would change (balances, the position before and after) and ` +
      `broadcasts nothing; otherwise it executes like \`agent-wallet execute\` (journal, Idempotency-Key, 402 and --pay, --wait).\n` +
      `(${family.protocol} on ${family.chains.join(', ')}: POST /protocols/${family.slug}/${e.path}; also under ${family.aliases.join(', ')})`,
    options: mergeOptions(
      fieldOptions(e.input),
      {
        simulate: { type: 'boolean', help: 'only simulate: the calls and their effects; nothing is broadcast' },
        'idempotency-key': { type: 'string', arg: 'KEY', help: 're-use to retry safely (default: a fresh UUID)' },
        pay: { type: 'boolean', help: 'if the answer is 402, pay it from the payer key and re-submit' },
      },
      WAIT_OPTIONS,
      PAYER_OPTIONS,
    ),
    examples: [`${example} --simulate`, `${example} --wait`],
    async run(values) {
      const { client, json } = clientContext(values);
      const body = fieldsOf(e.input, values, true);
      if (bool(values, 'simulate')) {
        const r = await client.protocols.simulate(family.slug, e.path, body);
        if (!r.ok) return printError(r.error, json);
        if (json) printJson(r.value);
        else process.stdout.write(renderBlock(r.value));
        return 0;
      }
      return submitAndReport(client, `/protocols/${family.slug}/${e.path}`, body as PayableCall['body'], values);
    },
  };
}

function exampleArgs(family: AnyFamily, path: string): string {
  const fields = Object.keys(flatObject((family.endpoints.find((x: AnyEndpoint<never>) => x.kind === 'action' && x.path === path) as { input: z.ZodType }).input).shape);
  if (fields.includes('key')) return `--key <order key>${fields.includes('trigger_price') ? ' --trigger-price 2800' : ''}`;
  if (fields.includes('size_usd')) return '--type market_increase --market ETH --side long --size-usd 1000 --collateral-token USDC --collateral-amount 200';
  return [fields.includes('market') && family.key === 'morphoBlue' ? '--market WETH/USDC' : '', fields.includes('token') ? '--token USDC' : '', '--amount 10']
    .filter((x) => x !== '')
    .join(' ');
}

/** Every endpoint of every family, as `agent-wallet <slug> <endpoint>` commands. */
export const PROTOCOL_COMMANDS: readonly Command[] = FAMILIES.flatMap((f) => f.endpoints.map((e: AnyEndpoint<never>) => endpointCommand(f, e as Any)));

/** The command a family's slug (or alias) and an endpoint name, e.g. ['aave-v3', 'supply'], stand for. */
export function protocolCommandFor(slugOrAlias: string, endpoint: string | undefined): { family: AnyFamily; command?: Command } | undefined {
  const family = FAMILIES.find((f) => f.slug === slugOrAlias || f.aliases.includes(slugOrAlias));
  if (!family) return undefined;
  return { family, command: PROTOCOL_COMMANDS.find((c) => c.name === `${family.slug} ${endpoint}`) };
}

/** `agent-wallet <slug>` alone (or --help): the family's endpoints. */
export function familyHelp(family: AnyFamily): string {
  const rows = PROTOCOL_COMMANDS.filter((c) => c.name.startsWith(`${family.slug} `)).map((c) => [`  agent-wallet ${c.name}`, c.summary]);
  return (
    `${family.slug} (${family.protocol} on ${family.chains.join(', ')}; alias ${family.aliases.join(', ')}): ${family.description}\n\n` +
    rows.map(([a, b]) => `${a!.padEnd(44)} ${b}`).join('\n') +
    `\n\nEach takes --help. docs/protocols/${family.slug}.md has worked examples.\n`
  );
}

export const protocolsCommand: Command = {
  name: 'protocols',
  summary: 'the DeFi protocol families (lend-a-v3, lend-b-v3, …) and their commands',
  usage: 'protocols [--json]',
  description:
    'Lists the protocol families of spec 4.3: their slugs, the protocols they stand for (also accepted as names), their chain, and\n' +
    'whether this version serves them. `agent-wallet <slug>` lists a family\'s commands.',
  options: {},
  examples: ['agent-wallet protocols', 'agent-wallet lend-b-v3', 'agent-wallet lend-b-v3 supply --help'],
  async run(values) {
    const rows = SPEC_PROTOCOLS.map((p) => ({ ...p, served: FAMILIES.some((f) => f.slug === p.slug) }));
    if (values.json === true) printJson(rows);
    else process.stdout.write(table(['slug', 'protocol', 'alias', 'chain', 'served'], rows.map((r) => [r.slug, r.protocol, r.alias, r.chain, r.served ? 'yes' : 'not yet'])));
    return 0;
  },
};
