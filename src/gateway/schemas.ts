import { getAddress, isAddress } from 'viem';
import { z } from 'zod';
import type { Call } from '../api/v1alpha1/index.ts';
import { CHAIN_NAMES, canonicalChain, type ChainName } from '../config/chains.ts';

/**
 * The HTTP contract of spec §2 and §4 in zod: request schemas validate (through the type provider), response
 * schemas serialize (unknown keys are stripped, so a presenter cannot leak a field by accident), and both feed
 * /openapi.json. Field names are the spec's, exactly. Messages are predicates: the error handler prefixes the
 * field name ("calldata must be ..."), and an issue whose message is REQUIRED becomes `missing_field`.
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
} as const;

const MAX_UINT256 = 2n ** 256n - 1n;
const NO_CONTROL_CHARS = /^[^\x00-\x1f\x7f]*$/;
const PRINTABLE_ASCII = /^[\x20-\x7e]+$/;

const text = (what = 'a string') =>
  z.string({ error: (iss) => (iss.input === undefined ? REQUIRED : `must be ${what}`) });

const object = (what: string) => ({
  error: (iss: { input?: unknown }) => (iss.input === undefined || iss.input === null ? REQUIRED : `must be ${what}`),
});

export const ChainSchema = text('a chain name')
  .refine((v) => canonicalChain(v) !== undefined, 'must be one of ethereum, base, arbitrum (aliases: eth, arb)')
  .transform((v) => canonicalChain(v)!)
  .meta({ description: 'ethereum, base or arbitrum; the aliases eth and arb are accepted', examples: ['ethereum'] });

const AgentId = text()
  .min(1, 'must not be empty')
  .max(LIMITS.agentIdMaxLength, `must be at most ${LIMITS.agentIdMaxLength} characters`)
  .regex(NO_CONTROL_CHARS, 'must not contain control characters')
  .meta({ description: 'Caller-chosen agent identity; maps to one smart wallet per API key.' });

const TargetContract = text('a 0x-prefixed address')
  .refine(
    (v) => isAddress(v, { strict: true }),
    'must be a 0x-prefixed 20-byte hex address (a mixed-case address must carry a valid EIP-55 checksum)',
  )
  .transform((v) => getAddress(v))
  .meta({
    description: '0x-prefixed contract address',
    pattern: '^0x[0-9a-fA-F]{40}$',
    examples: ['0x5FbDB2315678afecb367f032d93F642f64180aa3'],
  });

const Calldata = text('0x-prefixed hex')
  .regex(/^0x([0-9a-fA-F]{2})*$/, 'must be 0x-prefixed hex with an even number of digits (ABI-encoded)')
  .transform((v) => v.toLowerCase() as `0x${string}`)
  .meta({ description: 'ABI-encoded call data, 0x-prefixed; "0x" for a plain transfer', examples: ['0xd09de08a'] });

const Value = text('a decimal string, e.g. "0"')
  .regex(/^(0|[1-9][0-9]*)$/, 'must be a decimal string of a non-negative integer amount in wei, e.g. "0"')
  // Guarded: checks after a failed regex still run, and BigInt would throw on non-digits.
  .refine((v) => !/^[0-9]+$/.test(v) || BigInt(v) <= MAX_UINT256, 'must fit in a uint256')
  .meta({ description: 'Native amount in wei as a decimal string; defaults to "0"', examples: ['0'] });

const StrategyId = text()
  .min(1, 'must not be empty')
  .max(LIMITS.strategyIdMaxLength, `must be at most ${LIMITS.strategyIdMaxLength} characters`)
  .regex(NO_CONTROL_CHARS, 'must not contain control characters');

function isHttpsUrl(v: string): boolean {
  try {
    const u = new URL(v);
    return u.protocol === 'https:' && u.username === '' && u.password === '' && u.hostname !== '';
  } catch {
    return false;
  }
}

const CallbackUrl = text('an https URL')
  .max(LIMITS.callbackUrlMaxLength, `must be at most ${LIMITS.callbackUrlMaxLength} characters`)
  .refine(isHttpsUrl, 'must be an absolute https:// URL without credentials')
  .meta({ description: 'HTTPS URL that receives the signed completion webhook (execute only)' });

const BatchCallSchema = z.object(
  { target_contract: TargetContract, calldata: Calldata, value: Value.optional() },
  object('an object with target_contract, calldata and value'),
);

const SHAPE = 'invalid_request_shape';

/** Fields shared by both endpoints' bodies (strategy_id and callback_url are validated but ignored by simulate). */
const callFields = {
  agent_id: AgentId,
  chain: ChainSchema,
  target_contract: TargetContract.optional(),
  calldata: Calldata.optional(),
  value: Value.optional(),
  strategy_id: StrategyId.optional(),
  callback_url: CallbackUrl.optional(),
};

interface ShapeInput {
  target_contract?: unknown;
  calldata?: unknown;
  value?: unknown;
  batch_calls?: unknown;
}

/** Exactly one of the two shapes of spec §2.4, with the fields that shape needs. */
function checkShape(body: ShapeInput, ctx: z.RefinementCtx): void {
  const single = body.target_contract !== undefined || body.calldata !== undefined || body.value !== undefined;
  const batch = body.batch_calls !== undefined;
  if (single && batch) {
    ctx.addIssue({
      code: 'custom',
      path: [],
      message: 'must use one shape: target_contract/calldata/value (single call) or batch_calls (batch), not both',
      params: { code: SHAPE },
    });
    return;
  }
  if (batch) return;
  if (body.target_contract === undefined) {
    ctx.addIssue({
      code: 'custom',
      path: ['target_contract'],
      message: single ? REQUIRED : 'is required (or batch_calls, for a batch)',
      params: { code: 'missing_field' },
    });
  }
  if (body.calldata === undefined) {
    ctx.addIssue({ code: 'custom', path: ['calldata'], message: REQUIRED, params: { code: 'missing_field' } });
  }
}

export const ExecuteBodySchema = z
  .object(
    {
      ...callFields,
      batch_calls: z
        .array(BatchCallSchema, { error: (iss) => (iss.input === undefined ? REQUIRED : 'must be an array of calls') })
        .min(1, 'must contain at least one call')
        .optional()
        .meta({ description: "Batch shape: calls executed atomically in order; at most the key's maxBatchCalls" }),
    },
    object('a JSON object'),
  )
  .superRefine(checkShape)
  .meta({
    description:
      'Either the single-call shape (target_contract, calldata, value) or the batch shape (batch_calls), never both.',
  });
export type ExecuteBody = z.output<typeof ExecuteBodySchema>;

export const SimulateBodySchema = z
  .object(
    {
      ...callFields,
      batch_calls: z
        .never({ error: 'is not supported on /simulate: simulate one call at a time' })
        .optional()
        .meta({ description: 'Not accepted: /simulate takes the single-call shape only (spec §4.2)' }),
    },
    object('a JSON object'),
  )
  .superRefine(checkShape)
  .meta({ description: 'Single-call shape. strategy_id and callback_url are accepted and ignored.' });
export type SimulateBody = z.output<typeof SimulateBodySchema>;

/** The calls a validated body asks for, in the resource's form (value defaults to "0"). */
export function callsOf(body: ExecuteBody | SimulateBody): Call[] {
  if ('batch_calls' in body && Array.isArray(body.batch_calls)) {
    return body.batch_calls.map((c) => ({ target: c.target_contract, data: c.calldata, value: c.value ?? '0' }));
  }
  return [{ target: body.target_contract!, data: body.calldata!, value: body.value ?? '0' }];
}

export const ExecuteHeadersSchema = z.looseObject({
  'idempotency-key': z
    .string()
    .min(1, 'must not be empty')
    .max(LIMITS.idempotencyKeyMaxLength, `must be at most ${LIMITS.idempotencyKeyMaxLength} characters`)
    .regex(PRINTABLE_ASCII, 'must contain printable ASCII characters only')
    .optional()
    .meta({
      description:
        'Optional. Retrying with the same key and the same body returns the first request; with a different body, 422.',
    }),
});

export const WalletQuerySchema = z.object({
  agent_id: AgentId,
  chain: ChainSchema.default('ethereum'),
});

export const FeedQuerySchema = z.object({
  limit: z.coerce
    .number({ error: `must be an integer between 1 and ${LIMITS.feedMax}` })
    .int(`must be an integer between 1 and ${LIMITS.feedMax}`)
    .min(1, `must be an integer between 1 and ${LIMITS.feedMax}`)
    .max(LIMITS.feedMax, `must be an integer between 1 and ${LIMITS.feedMax}`)
    .default(LIMITS.feedDefault)
    .meta({ description: `How many executions, newest first: 1 to ${LIMITS.feedMax}, default ${LIMITS.feedDefault}` }),
});

export const StatusParamsSchema = z.object({ id: z.string().meta({ description: 'request_id from POST /execute' }) });

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
    error: z.string().meta({ description: 'Stable machine-readable code (snake_case), or the spec §5.6 texts for 401' }),
    message: z.string().meta({ description: 'Human-readable explanation' }),
  })
  .meta({ description: 'Error body: { error, message, ...details } (see docs/api.md)' });

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
