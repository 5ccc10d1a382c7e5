import { getAddress, isAddress } from 'viem';
import { z } from 'zod';
import { AgentScopeSchema, DEFAULT_KEY_LIMITS } from '../v1alpha1/index.ts';
import { CHAIN_ALIASES, CHAIN_NAMES, canonicalChain, type ChainName } from '../../config/chains.ts';

/**
 * The fields the HTTP contract is built of (src/api/http: one file per resource). The gateway validates with
 * these schemas (through the zod type provider) and publishes them in /openapi.json; the typed client
 * (src/client) imports the same ones. Field names are the spec's, exactly.
 *
 * Messages are predicates: the gateway's error handler prefixes the field name ("calldata must be ..."), and an
 * issue whose message starts with REQUIRED becomes `missing_field`; other issues take the field's code from
 * FIELD_ERROR_CODES, or an explicit `params.code`.
 */
export const REQUIRED = 'is required';

/** Error code per field for issues that carry no explicit code (see errors.ts). */
export const FIELD_ERROR_CODES: Readonly<Record<string, string>> = {
  agent_id: 'invalid_agent_id',
  chain: 'unsupported_chain',
  target_contract: 'invalid_target_contract',
  calldata: 'invalid_calldata',
  value: 'invalid_value',
  batch_calls: 'invalid_batch_calls',
  strategy_id: 'invalid_strategy_id',
  callback_url: 'invalid_callback_url',
  limit: 'invalid_limit',
  'idempotency-key': 'invalid_idempotency_key',
  'payment-signature': 'invalid_payment_signature',
  // the protocol endpoints (src/protocols/common/inputs.ts)
  token: 'invalid_token',
  collateral_token: 'invalid_token',
  market: 'invalid_market',
  amount: 'invalid_amount',
  amount_raw: 'invalid_amount',
  // the exchange families (src/protocols/common/swap.ts and their own fields)
  token_in: 'invalid_token',
  token_out: 'invalid_token',
  amount_in: 'invalid_amount',
  amount_out: 'invalid_amount',
  amount_out_minimum: 'invalid_amount',
  amount_in_maximum: 'invalid_amount',
  slippage_bps: 'invalid_slippage',
  max_price_impact_bps: 'invalid_price_impact',
  deadline: 'invalid_deadline',
  fee: 'invalid_fee',
  route: 'invalid_route',
  pool: 'invalid_pool',
  position: 'invalid_position',
  price_lower: 'invalid_price',
  price_upper: 'invalid_price',
  quote_token: 'invalid_token',
  amount0: 'invalid_amount',
  amount1: 'invalid_amount',
  amount0_min: 'invalid_amount',
  amount1_min: 'invalid_amount',
  percentage: 'invalid_percentage',
  // perp-v2 (src/protocols/gmxV2)
  type: 'invalid_order_type',
  side: 'invalid_side',
  size_usd: 'invalid_size',
  collateral_amount: 'invalid_amount',
  acceptable_price: 'invalid_price',
  execution_fee: 'invalid_execution_fee',
  trigger_price: 'invalid_price',
  key: 'invalid_order_key',
};

export const LIMITS = {
  agentIdMaxLength: 256,
  strategyIdMaxLength: 128,
  callbackUrlMaxLength: 2048,
  idempotencyKeyMaxLength: 255,
  feedDefault: 20,
  feedMax: 100,
  /** An ApiClient's `limits.maxBatchCalls` when the operator sets none: what /openapi.json publishes as maxItems. */
  defaultMaxBatchCalls: DEFAULT_KEY_LIMITS.maxBatchCalls,
} as const;

const MAX_UINT256 = 2n ** 256n - 1n;
const NO_CONTROL_CHARS = /^[^\x00-\x1f\x7f]*$/;
/** With the `u` flag a surrogate pair is one code point: only a lone surrogate is in U+D800–U+DFFF. */
const WELL_FORMED = /^[^\uD800-\uDFFF]*$/u;

/**
 * What the published JSON Schema says must be exactly what the validator accepts (schemathesis checks both
 * directions in test/contract/). Hence the details below: lengths are counted in code points, as JSON Schema
 * counts them (a JS string's `length` counts UTF-16 units), and a check zod cannot express in JSON Schema
 * (a refine) carries an equivalent `pattern` in its meta, proven equivalent in schemas.test.ts.
 */
const codePoints = (v: string): number => {
  let n = 0;
  for (const _ of v) n++;
  return n;
};

export const text = (what = 'a string') =>
  z.string({ error: (iss) => (iss.input === undefined ? REQUIRED : `must be ${what}`) });

/**
 * Free text of 1 to `max` code points without control characters (agent_id, strategy_id), and well-formed
 * Unicode: a lone surrogate (`"x\ud800y"` in JSON) or bytes that are not UTF-8 in a query string are refused,
 * not replaced with U+FFFD, which would map different ids onto one wallet while the answers echo the original.
 * The published pattern says both things (with the `u` flag a surrogate pair is one code point, so only lone
 * surrogates fall in U+D800–U+DFFF).
 */
export const label = (max: number) =>
  text()
    .refine((v) => v.length > 0, 'must not be empty')
    .refine((v) => codePoints(v) <= max, `must be at most ${max} characters`)
    .regex(NO_CONTROL_CHARS, 'must not contain control characters')
    .regex(WELL_FORMED, 'must be well-formed Unicode (no lone surrogates; UTF-8 in a query string)')
    .meta({ minLength: 1, maxLength: max, pattern: '^[^\\x00-\\x1f\\x7f\\uD800-\\uDFFF]*$' });

/**
 * A query parameter, given once. Repeated (`?agent_id=a&agent_id=b`) the query parser hands over an array:
 * the answer says it was given twice rather than "must be a string". Its code is `duplicate_parameter`.
 */
export const queryParam = <T extends z.ZodType>(schema: T) =>
  z.preprocess((v, ctx) => {
    if (!Array.isArray(v)) return v;
    ctx.addIssue({ code: 'custom', message: `was given ${v.length} times; give it once`, params: { code: 'duplicate_parameter' }, input: v });
    return z.NEVER;
  }, schema);

/** An object's error: absent is "required"; anything else, `null` included, is "must be <what>" (invalid_request). */
export const object = (what: string) => ({
  error: (iss: { input?: unknown }) => (iss.input === undefined ? REQUIRED : `must be ${what}`),
});

/** Every spelling of a letter-only word in any case, as a regex (JSON Schema patterns have no `i` flag). */
const anyCase = (word: string): string =>
  [...word].map((c) => (/[a-z]/.test(c) ? `[${c}${c.toUpperCase()}]` : c)).join('');

/** Accepted payload chain names: canonical names and aliases (spec §1.9), in any case, nothing around them. */
const CHAIN_INPUTS: readonly string[] = [...CHAIN_NAMES, ...Object.keys(CHAIN_ALIASES)];
const CHAIN_PATTERN = new RegExp(`^(?:${CHAIN_INPUTS.map(anyCase).join('|')})$`);

export const CHAIN_DESCRIPTION = 'ethereum, base or arbitrum; the aliases eth and arb are accepted too. Any letter case.';

/**
 * The chains a protocol family runs on, each by its name or alias in any case: any other value, another chain
 * included, is 400 `unsupported_chain` naming them, and the published pattern says exactly that.
 */
export const onlyChains = (chains: readonly ChainName[]) => {
  const names = chains.flatMap((chain) => [chain, ...Object.entries(CHAIN_ALIASES).filter(([, c]) => c === chain).map(([alias]) => alias)]);
  const aliases = names.filter((n) => !chains.includes(n as ChainName));
  return text('a chain name')
    .regex(
      new RegExp(`^(?:${names.map(anyCase).join('|')})$`),
      `must be ${chains.join(' or ')}${aliases.length > 0 ? ` (or ${aliases.join(', ')})` : ''}: this family runs there only`,
    )
    .meta({ examples: [...chains] })
    .transform((v) => canonicalChain(v)!);
};
export const ChainSchema = text('a chain name')
  .regex(CHAIN_PATTERN, 'must be one of ethereum, base, arbitrum (aliases: eth, arb)')
  .meta({ examples: [...CHAIN_NAMES] })
  .transform((v) => canonicalChain(v)!)
  .meta({ description: CHAIN_DESCRIPTION });

export const AgentId = label(LIMITS.agentIdMaxLength).meta({
  description: 'Caller-chosen agent identity; maps to one smart wallet per API key. Case-sensitive, not trimmed.',
  examples: ['agent-1'],
});

/**
 * An agent scope as an operator gives it (a key's, a policy's `agents`): its agent id or prefix held to the API's
 * agent-id rules (no control characters, at most 256 code points), so it can match the ids the API accepts.
 */
export const OperatorAgentScopeSchema = AgentScopeSchema.extend({ agentId: AgentId });

export const targetContract = (missing: string) =>
  z
    .string({ error: (iss) => (iss.input === undefined ? missing : 'must be a 0x-prefixed address') })
    .refine(
      // viem's strict check refuses all-uppercase hex, which carries no checksum any more than all-lowercase.
      (v) => /^0x[0-9A-F]{40}$/.test(v) || isAddress(v, { strict: true }),
      'must be a 0x-prefixed 20-byte hex address (a mixed-case address must carry a valid EIP-55 checksum)',
    )
    .transform((v) => getAddress(v))
    .meta({
      description:
        '0x-prefixed 20-byte contract address. All lowercase, all uppercase, or mixed case with a valid EIP-55 ' +
        'checksum (JSON Schema cannot express the checksum: a mixed-case address with a wrong one is 400 invalid_target_contract).',
      pattern: '^0x[0-9a-fA-F]{40}$',
      examples: ['0x5FbDB2315678afecb367f032d93F642f64180aa3'],
    });
export const TargetContract = targetContract(REQUIRED);

export const Calldata = text('0x-prefixed hex')
  .regex(/^0x(?:[0-9a-fA-F]{2})*$/, 'must be 0x-prefixed hex with an even number of digits (ABI-encoded)')
  .transform((v) => v.toLowerCase() as `0x${string}`)
  .meta({ description: 'ABI-encoded call data, 0x-prefixed; "0x" for a plain transfer', examples: ['0xd09de08a'] });

/**
 * A regex for the decimal numerals from 0 to `max` (no sign, no leading zeros): fewer digits than `max`, or
 * as many with the same leading digits up to one that is smaller (then any digits), or `max` itself. Flat
 * alternatives rather than nested groups: some JSON Schema validators (jsonschema-rs, used by schemathesis)
 * refuse deeply nested patterns. `positive`: from 1.
 */
export function decimalAtMostPattern(max: bigint, opts: { positive?: boolean } = {}): string {
  const s = max.toString();
  const n = s.length;
  const alternatives = opts.positive ? [] : ['0'];
  if (n > 1) alternatives.push(n > 2 ? `[1-9][0-9]{0,${n - 2}}` : '[1-9]');
  for (let i = 0; i < n; i++) {
    const digit = Number(s[i]);
    const lowest = i === 0 ? 1 : 0;
    if (digit <= lowest) continue;
    const smaller = digit - 1 === lowest ? `${lowest}` : `[${lowest}-${digit - 1}]`;
    const rest = n - 1 - i;
    alternatives.push(`${s.slice(0, i)}${smaller}${rest > 0 ? `[0-9]{${rest}}` : ''}`);
  }
  if (s !== '0') alternatives.push(s);
  // Nothing from 1 to 0: a pattern no string matches.
  if (alternatives.length === 0) return '^(?!)$';
  return `^(?:${alternatives.join('|')})$`;
}
const UINT256_DECIMAL_PATTERN = decimalAtMostPattern(MAX_UINT256);

export const Value = text('a decimal string, e.g. "0"')
  .regex(/^(0|[1-9][0-9]*)$/, 'must be a decimal string of a non-negative integer amount in wei, e.g. "0"')
  // Guarded: checks after a failed regex still run, and BigInt would throw on non-digits.
  .refine((v) => !/^[0-9]+$/.test(v) || BigInt(v) <= MAX_UINT256, 'must fit in a uint256')
  .meta({
    description: 'Native amount in wei: a decimal string of an integer from 0 to 2^256-1. Defaults to "0"',
    pattern: UINT256_DECIMAL_PATTERN,
    examples: ['0'],
  });

export const StrategyId = label(LIMITS.strategyIdMaxLength).meta({ description: 'Optional caller label, echoed by GET /status' });

/**
 * The callback URLs accepted: `https://`, a DNS name (whose last label starts with a letter, so the WHATWG
 * parser cannot read it as an IPv4 number; no punycode `xn--` labels, which it would decode and may refuse) or
 * a dotted-decimal IPv4 address, an optional port from 1 to 65535, then anything without spaces or control
 * characters. No credentials: the authority ends at the host and port. Every URL this matches, `new URL()`
 * parses (schemas.test.ts), and the refine below keeps it that way.
 */
const DNS_LABEL = '(?![Xx][Nn]--)[A-Za-z0-9](?:[A-Za-z0-9-]*[A-Za-z0-9])?';
const LAST_LABEL = '(?![Xx][Nn]--)[A-Za-z](?:[A-Za-z0-9-]*[A-Za-z0-9])?';
const OCTET = '(?:25[0-5]|2[0-4][0-9]|1[0-9]{2}|[1-9]?[0-9])';
const PORT = '(?:[1-9][0-9]{0,3}|[1-5][0-9]{4}|6[0-4][0-9]{3}|65[0-4][0-9]{2}|655[0-2][0-9]|6553[0-5])';
// Plain http:// is let through to the service's own check only for a loopback host (localhost, 127/8): a
// receiver on the same machine, accepted in development only (src/lib/egress/egress.ts names the setting).
const CALLBACK_URL_PATTERN =
  `^(?:https://(?:(?:${DNS_LABEL}\\.)*${LAST_LABEL}|${OCTET}(?:\\.${OCTET}){3})|http://(?:localhost|127(?:\\.${OCTET}){3}))` +
  `(?::${PORT})?(?:[/?#][^\\x00-\\x20\\x7f]*)?$`;
const CALLBACK_URL = new RegExp(CALLBACK_URL_PATTERN, 'u');

function isCallbackUrl(v: string): boolean {
  try {
    const u = new URL(v);
    const loopback = u.hostname === 'localhost' || /^127\./.test(u.hostname);
    return (u.protocol === 'https:' || (u.protocol === 'http:' && loopback)) && u.username === '' && u.password === '' && u.hostname !== '';
  } catch {
    return false;
  }
}

export const CallbackUrl = text('an https URL')
  .refine((v) => codePoints(v) <= LIMITS.callbackUrlMaxLength, `must be at most ${LIMITS.callbackUrlMaxLength} characters`)
  .refine((v) => CALLBACK_URL.test(v) && isCallbackUrl(v), 'must be an absolute https:// URL without credentials (plain http:// only to localhost or 127.0.0.1, in development)')
  .meta({
    description:
      'HTTPS URL that receives the signed completion webhook (execute only): https://, a DNS name or IPv4 address, ' +
      'an optional port, no credentials, no spaces. Plain http://localhost or http://127.x.x.x (a receiver on the ' +
      "service's machine) only where the operator allows loopback receivers (development); refused otherwise.",
    pattern: CALLBACK_URL_PATTERN,
    maxLength: LIMITS.callbackUrlMaxLength,
    examples: ['https://agent.example/hooks/agent-wallet'],
  });

/** Output enums: what responses may say. */
export const ChainOut = z.enum(CHAIN_NAMES);
