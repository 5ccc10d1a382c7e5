import { getAddress, isAddress } from 'viem';
import { z } from 'zod';
import { ApiClientSpecSchema, type Call } from '../api/v1alpha1/index.ts';
import { CHAIN_ALIASES, CHAIN_NAMES, canonicalChain, type ChainName } from '../config/chains.ts';
import { DNS_1123_SUBDOMAIN, REQUEST_ID_MAX_LENGTH } from './requestIds.ts';

/**
 * The HTTP contract of spec §2 and §4 in zod: request schemas validate (through the type provider), response
 * schemas serialize (unknown keys are stripped, so a presenter cannot leak a field by accident), and both feed
 * /openapi.json. Field names are the spec's, exactly. Messages are predicates: the error handler prefixes the
 * field name ("calldata must be ..."), and an issue whose message starts with REQUIRED becomes `missing_field`.
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
};

export const LIMITS = {
  agentIdMaxLength: 256,
  strategyIdMaxLength: 128,
  callbackUrlMaxLength: 2048,
  idempotencyKeyMaxLength: 255,
  feedDefault: 20,
  feedMax: 100,
  /** An ApiClient's `limits.maxBatchCalls` when the operator sets none: what /openapi.json publishes as maxItems. */
  defaultMaxBatchCalls: ApiClientSpecSchema.shape.limits.parse(undefined).maxBatchCalls,
} as const;

const MAX_UINT256 = 2n ** 256n - 1n;
const NO_CONTROL_CHARS = /^[^\x00-\x1f\x7f]*$/;

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

const text = (what = 'a string') =>
  z.string({ error: (iss) => (iss.input === undefined ? REQUIRED : `must be ${what}`) });

/** Free text of 1 to `max` code points without control characters (agent_id, strategy_id). */
const label = (max: number) =>
  text()
    .refine((v) => v.length > 0, 'must not be empty')
    .refine((v) => codePoints(v) <= max, `must be at most ${max} characters`)
    .regex(NO_CONTROL_CHARS, 'must not contain control characters')
    .meta({ minLength: 1, maxLength: max });

const object = (what: string) => ({
  error: (iss: { input?: unknown }) => (iss.input === undefined || iss.input === null ? REQUIRED : `must be ${what}`),
});

/** Every spelling of a letter-only word in any case, as a regex (JSON Schema patterns have no `i` flag). */
const anyCase = (word: string): string =>
  [...word].map((c) => (/[a-z]/.test(c) ? `[${c}${c.toUpperCase()}]` : c)).join('');

/** Accepted payload chain names: canonical names and aliases (spec §1.9), in any case, nothing around them. */
const CHAIN_INPUTS: readonly string[] = [...CHAIN_NAMES, ...Object.keys(CHAIN_ALIASES)];
const CHAIN_PATTERN = new RegExp(`^(?:${CHAIN_INPUTS.map(anyCase).join('|')})$`);

const CHAIN_DESCRIPTION = 'ethereum, base or arbitrum; the aliases eth and arb are accepted too. Any letter case.';
export const ChainSchema = text('a chain name')
  .regex(CHAIN_PATTERN, 'must be one of ethereum, base, arbitrum (aliases: eth, arb)')
  .meta({ examples: [...CHAIN_NAMES] })
  .transform((v) => canonicalChain(v)!)
  .meta({ description: CHAIN_DESCRIPTION });

const AgentId = label(LIMITS.agentIdMaxLength).meta({
  description: 'Caller-chosen agent identity; maps to one smart wallet per API key. Case-sensitive, not trimmed.',
  examples: ['agent-1'],
});

const targetContract = (missing: string) =>
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
const TargetContract = targetContract(REQUIRED);

const Calldata = text('0x-prefixed hex')
  .regex(/^0x(?:[0-9a-fA-F]{2})*$/, 'must be 0x-prefixed hex with an even number of digits (ABI-encoded)')
  .transform((v) => v.toLowerCase() as `0x${string}`)
  .meta({ description: 'ABI-encoded call data, 0x-prefixed; "0x" for a plain transfer', examples: ['0xd09de08a'] });

/**
 * A regex for the decimal numerals from 0 to `max` (no sign, no leading zeros): fewer digits than `max`, or
 * as many with the same leading digits up to one that is smaller (then any digits), or `max` itself. Flat
 * alternatives rather than nested groups: some JSON Schema validators (jsonschema-rs, used by schemathesis)
 * refuse deeply nested patterns.
 */
export function decimalAtMostPattern(max: bigint): string {
  const s = max.toString();
  const n = s.length;
  const alternatives = ['0'];
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
  return `^(?:${alternatives.join('|')})$`;
}
const UINT256_DECIMAL_PATTERN = decimalAtMostPattern(MAX_UINT256);

const Value = text('a decimal string, e.g. "0"')
  .regex(/^(0|[1-9][0-9]*)$/, 'must be a decimal string of a non-negative integer amount in wei, e.g. "0"')
  // Guarded: checks after a failed regex still run, and BigInt would throw on non-digits.
  .refine((v) => !/^[0-9]+$/.test(v) || BigInt(v) <= MAX_UINT256, 'must fit in a uint256')
  .meta({
    description: 'Native amount in wei: a decimal string of an integer from 0 to 2^256-1. Defaults to "0"',
    pattern: UINT256_DECIMAL_PATTERN,
    examples: ['0'],
  });

const StrategyId = label(LIMITS.strategyIdMaxLength).meta({ description: 'Optional caller label, echoed by GET /status' });

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
const CALLBACK_URL_PATTERN =
  `^https://(?:(?:${DNS_LABEL}\\.)*${LAST_LABEL}|${OCTET}(?:\\.${OCTET}){3})(?::${PORT})?(?:[/?#][^\\x00-\\x20\\x7f]*)?$`;
const CALLBACK_URL = new RegExp(CALLBACK_URL_PATTERN, 'u');

function isHttpsUrl(v: string): boolean {
  try {
    const u = new URL(v);
    return u.protocol === 'https:' && u.username === '' && u.password === '' && u.hostname !== '';
  } catch {
    return false;
  }
}

const CallbackUrl = text('an https URL')
  .refine((v) => codePoints(v) <= LIMITS.callbackUrlMaxLength, `must be at most ${LIMITS.callbackUrlMaxLength} characters`)
  .refine((v) => CALLBACK_URL.test(v) && isHttpsUrl(v), 'must be an absolute https:// URL without credentials')
  .meta({
    description:
      'HTTPS URL that receives the signed completion webhook (execute only): https://, a DNS name or IPv4 address, ' +
      'an optional port, no credentials, no spaces.',
    pattern: CALLBACK_URL_PATTERN,
    maxLength: LIMITS.callbackUrlMaxLength,
    examples: ['https://agent.example/hooks/agent-wallet'],
  });

const BatchCallSchema = z
  .object(
    { target_contract: TargetContract, calldata: Calldata, value: Value.optional() },
    object('an object with target_contract, calldata and value'),
  )
  .meta({ description: 'One call of a batch' });

/** Code of the issue for a body that mixes the single-call and batch shapes (errors.ts reports it first). */
export const SHAPE_ERROR_CODE = 'invalid_request_shape';
const SHAPE_MESSAGE =
  'must use one shape: target_contract/calldata/value (single call) or batch_calls (batch), not both';

/**
 * A field that must be absent in this shape. In JSON Schema `{ "not": {} }`; errors.ts recognises its issue
 * (`expected: "never"`) to tell which alternative of a union the caller meant.
 */
const absent = (description: string, error?: string) =>
  z.never(error !== undefined ? { error } : undefined).optional().meta({ description });

const common = {
  agent_id: AgentId,
  chain: ChainSchema,
};
const extras = {
  strategy_id: StrategyId.optional(),
  callback_url: CallbackUrl.optional(),
};

const NOT_WITH_SINGLE = 'Not allowed in the single-call shape';
const NOT_WITH_BATCH = 'Not allowed in the batch shape';

const SingleCallBodySchema = z
  .object(
    {
      ...common,
      target_contract: targetContract(`${REQUIRED} (or batch_calls, for a batch)`),
      calldata: Calldata,
      value: Value.optional(),
      ...extras,
      batch_calls: absent(NOT_WITH_SINGLE),
    },
    object('a JSON object'),
  )
  .meta({ title: 'Single call', description: 'One call: target_contract, calldata and optionally value.' });

const BatchBodySchema = z
  .object(
    {
      ...common,
      batch_calls: z
        .array(BatchCallSchema, { error: (iss) => (iss.input === undefined ? REQUIRED : 'must be an array of calls') })
        .min(1, 'must contain at least one call')
        .meta({
          description:
            `Calls executed atomically, in order, in one UserOperation. At most the API key's maxBatchCalls: ` +
            `${LIMITS.defaultMaxBatchCalls} unless the operator configured the key otherwise (more: 400 batch_too_large).`,
          maxItems: LIMITS.defaultMaxBatchCalls,
        }),
      ...extras,
      target_contract: absent(NOT_WITH_BATCH),
      calldata: absent(NOT_WITH_BATCH),
      value: absent(NOT_WITH_BATCH),
    },
    object('a JSON object'),
  )
  .meta({ title: 'Batch', description: 'Several calls in batch_calls, none of the single-call fields.' });

/** Spec §2.4: exactly one of the two shapes (`oneOf` in /openapi.json). */
export const ExecuteBodySchema = z.xor([SingleCallBodySchema, BatchBodySchema], { error: SHAPE_MESSAGE }).meta({
  description:
    'Either the single-call shape (target_contract, calldata, value) or the batch shape (batch_calls), never both. ' +
    'Unknown fields are ignored.',
});
export type ExecuteBody = z.output<typeof ExecuteBodySchema>;

export const SimulateBodySchema = z
  .object(
    {
      ...common,
      target_contract: TargetContract,
      calldata: Calldata,
      value: Value.optional(),
      ...extras,
      batch_calls: absent(
        'Not accepted: /simulate takes the single-call shape only (spec §4.2)',
        'is not supported on /simulate: simulate one call at a time',
      ),
    },
    object('a JSON object'),
  )
  .meta({
    description: 'Single-call shape only. strategy_id and callback_url are validated and ignored. Unknown fields are ignored.',
  });
export type SimulateBody = z.output<typeof SimulateBodySchema>;

/** The calls a validated body asks for, in the resource's form (value defaults to "0"). */
export function callsOf(body: ExecuteBody | SimulateBody): Call[] {
  if (body.batch_calls !== undefined) {
    return body.batch_calls.map((c) => ({ target: c.target_contract, data: c.calldata, value: c.value ?? '0' }));
  }
  return [{ target: body.target_contract, data: body.calldata, value: body.value ?? '0' }];
}

export const ExecuteHeadersSchema = z.looseObject({
  'idempotency-key': z
    .string()
    .min(1, 'must not be empty')
    .max(LIMITS.idempotencyKeyMaxLength, `must be at most ${LIMITS.idempotencyKeyMaxLength} characters`)
    // HTTP strips spaces around a field value (RFC 9110 §5.5), so none can be part of a key.
    .regex(/^[\x21-\x7e](?:[\x20-\x7e]*[\x21-\x7e])?$/, 'must contain printable ASCII characters only')
    .optional()
    .meta({
      description:
        'Optional, 1 to 255 printable ASCII characters. Retrying with the same key and the same body returns the ' +
        'first request; with a different body, 422.',
    }),
});

export const WalletQuerySchema = z.object({
  agent_id: AgentId,
  chain: ChainSchema.default('ethereum').meta({ description: `${CHAIN_DESCRIPTION} Default: ethereum.` }),
});

const LIMIT_MESSAGE = `must be an integer between 1 and ${LIMITS.feedMax}`;
export const FeedQuerySchema = z.object({
  // Query values are text: digits become a number, anything else stays text and fails as "not an integer".
  limit: z
    .preprocess(
      (v) => (typeof v === 'string' && /^[0-9]{1,15}$/.test(v) ? Number(v) : v),
      z
        .int({ error: LIMIT_MESSAGE })
        .min(1, LIMIT_MESSAGE)
        .max(LIMITS.feedMax, LIMIT_MESSAGE)
        .default(LIMITS.feedDefault)
        .meta({ description: `How many executions, newest first: 1 to ${LIMITS.feedMax}, default ${LIMITS.feedDefault}` }),
    ),
});

export const StatusParamsSchema = z.object({
  id: z
    .string()
    .meta({
      description:
        'request_id from POST /execute. Request ids are DNS-1123 names (`req-...`); any other id, e.g. a ' +
        'simulation\'s `sim_...`, names nothing: 404.',
      pattern: DNS_1123_SUBDOMAIN.source,
      maxLength: REQUEST_ID_MAX_LENGTH,
      examples: ['req-01j9z3k5x8d4q2w7e6r5t4y3u2'],
    }),
});

// ---------------------------------------------------------------------------------------------- responses

export const STATUSES = [
  'pending',
  'payment_required',
  'payment_verified',
  'queued',
  'broadcasting',
  'confirmed',
  'reverted',
  'failed',
] as const;
export type RequestStatus = (typeof STATUSES)[number];
const StatusSchema = z.enum(STATUSES);
const ChainOut = z.enum(CHAIN_NAMES);

export const ErrorBodySchema = z
  .looseObject({
    error: z.string().meta({
      description: 'Stable machine-readable code (snake_case), or the spec §5.6 texts for 401. See docs/api.md for the list.',
      examples: ['invalid_calldata', 'simulation_failed', 'rate_limited', 'invalid API key'],
    }),
    message: z.string().meta({ description: 'Human-readable explanation' }),
    field: z.string().optional().meta({ description: 'Validation errors: the offending field, e.g. batch_calls[1].calldata' }),
    issues: z
      .array(z.object({ field: z.string(), code: z.string(), message: z.string() }))
      .optional()
      .meta({ description: 'Validation errors: every issue found; the first one is the one in error/field/message' }),
    request_id: z.string().optional().meta({ description: 'The request concerned, when one was created' }),
    retry_after_seconds: z.int().optional().meta({ description: '429: seconds to wait (also in Retry-After)' }),
    trace_id: z.string().optional().meta({ description: '5xx: the X-Trace-Id to quote to support' }),
  })
  .meta({ id: 'ErrorBody', description: 'Error body: { error, message, ...details } (see docs/api.md)' });

/** What each error status means in /openapi.json (docs/api.md has the codes). */
const ERROR_STATUSES = {
  400: 'Invalid request (`error` names the problem and `field` the field), or the call failed in simulation: simulation_failed, insufficient_funds',
  401: 'Missing or invalid X-API-Key',
  404: 'No such resource for this API key',
  413: 'The body is over the size limit: payload_too_large',
  414: 'A path parameter is too long: uri_too_long',
  415: 'The body is not application/json: unsupported_media_type',
  422: 'The Idempotency-Key was used before with a different body: idempotency_key_mismatch',
  429: 'Rate limited: retry after Retry-After seconds',
  500: 'Internal error, or the request failed or was not decided before it was queued (execution_failed, decision_timeout: poll GET /status/:id)',
  501: 'The API key\'s payment mode is not available on this deployment: payment_mode_unavailable',
  503: 'A chain or the state store is unavailable: retry with backoff (Retry-After)',
} as const;
export type ErrorStatus = keyof typeof ERROR_STATUSES;

/** A JSON response as Fastify takes it: the schema serializes, the description documents. */
export function jsonResponse<T extends z.ZodType>(description: string, schema: T) {
  return { description, content: { 'application/json': { schema } } };
}

/** The documented error responses of a route, each with the one error body schema. */
export function errorResponses<const S extends ErrorStatus>(
  ...statuses: S[]
): Record<S, ReturnType<typeof jsonResponse<typeof ErrorBodySchema>>> {
  return Object.fromEntries(statuses.map((s) => [s, jsonResponse(ERROR_STATUSES[s], ErrorBodySchema)])) as Record<
    S,
    ReturnType<typeof jsonResponse<typeof ErrorBodySchema>>
  >;
}

/** Spec §2.1. `chain` is an extra. */
export const WalletRecordSchema = z.object({
  agent_id: z.string(),
  smart_wallet_address: z.string(),
  deployed: z.boolean(),
  message: z.string(),
  chain: ChainOut,
});

export const BalanceSchema = z.object({
  agent_id: z.string(),
  chain: ChainOut,
  smart_wallet_address: z.string(),
  deployed: z.boolean(),
  native: z.object({ symbol: z.string(), wei: z.string(), formatted: z.string() }),
  tokens: z.array(
    z.object({
      symbol: z.string(),
      address: z.string(),
      decimals: z.int(),
      raw: z.string(),
      formatted: z.string(),
      accepted_for_payment: z.boolean().optional(),
    }),
  ),
});

/** Spec §2.2. */
export const ExecutionResultSchema = z.object({
  request_id: z.string(),
  status: StatusSchema,
  smart_wallet_address: z.string(),
  estimated_gas: z.int(),
  estimated_cost_usd: z.number(),
  tx_hash: z.string().nullable(),
  message: z.string(),
});
export type ExecutionResult = z.infer<typeof ExecutionResultSchema>;

/** Spec §2.3, plus documented extras after `updated_at`. */
export const StatusRecordSchema = z.object({
  request_id: z.string(),
  status: StatusSchema,
  chain: ChainOut,
  tx_hash: z.string().nullable(),
  cost_usd: z.number(),
  created_at: z.string(),
  updated_at: z.string(),
  agent_id: z.string(),
  strategy_id: z.string().nullable(),
  smart_wallet_address: z.string().nullable(),
  calls: z.int(),
  estimated_gas: z.int().nullable(),
  block_number: z.string().nullable(),
  gas_used: z.string().nullable(),
  failure: z.object({ code: z.string(), message: z.string(), revert_reason: z.string().nullable() }).nullable(),
});
export type StatusRecord = z.infer<typeof StatusRecordSchema>;

/** Spec §2.8. */
export const PaymentRequiredSchema = z.object({
  error: z.literal('payment_required'),
  amount_usd: z.number(),
  accepted_tokens: z.array(z.string()),
  required_amount_raw: z.record(z.string(), z.string()),
  payment_address: z.string(),
  chain: ChainOut,
  request_id: z.string(),
  smart_wallet_address: z.string(),
});

/** One public feed entry: deliberately nothing that identifies a key, an agent, a wallet or a callback. */
export const FeedSchema = z.object({
  executions: z.array(
    z.object({
      status: StatusSchema,
      chain: ChainOut,
      tx_hash: z.string().nullable(),
      calls: z.int(),
      created_at: z.string(),
      updated_at: z.string(),
    }),
  ),
});
export type Feed = z.infer<typeof FeedSchema>;

export const HealthSchema = z.object({
  status: z.enum(['ok', 'degraded']),
  version: z.string(),
  uptime_seconds: z.number(),
  time: z.string(),
  store: z.object({ synced: z.boolean() }),
  chains: z.array(
    z.object({
      chain: ChainOut,
      network: z.string(),
      chain_id: z.int(),
      reachable: z.boolean().nullable(),
      block_number: z.string().nullable(),
      latency_ms: z.number().nullable(),
    }),
  ),
});
export type Health = z.infer<typeof HealthSchema>;

export type { ChainName };
