import { z } from 'zod';
import type { Call } from '../v1alpha1/index.ts';
import {
  AgentId,
  Calldata,
  CallbackUrl,
  ChainOut,
  ChainSchema,
  LIMITS,
  REQUIRED,
  StrategyId,
  TargetContract,
  Value,
  object,
  targetContract,
} from './common.ts';
import { StatusSchema } from './status.ts';

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
  // Read only for keys that take payments (a sponsored key's is ignored, spec §2.6): parsePaymentProof then.
  // Its length is parsePaymentProof's to refuse (invalid_payment_proof), like every other flaw of the proof.
  'x-payment-proof': z
    .string()
    .optional()
    .meta({
      description:
        'Spec §2.5: JSON {request_id?, payer, token, chain, tx_hash, signature?} proving a transfer of exactly the ' +
        'quoted required_amount_raw to the payment_address. Re-submit the same request with it after a 402. Not JSON, ' +
        'or a field missing: 400 invalid_payment_proof. Ignored for a sponsored key.',
    }),
  'payment-signature': z
    .string()
    .min(1)
    .max(16_384, 'must be at most 16384 characters')
    .optional()
    .meta({
      description:
        'x402 v2: the base64 PaymentPayload of an EIP-3009 authorization answering the 402’s PAYMENT-REQUIRED offer. ' +
        'Ignored for a sponsored key.',
    }),
});

/** The longest X-Payment-Proof: its fields and a contract wallet's signature (ERC-6492 wrapping an ERC-1271 one). */
export const MAX_PAYMENT_PROOF_LENGTH = 16_384;

/** The X-Payment-Proof header's JSON (spec §2.5), or why it is not one (the 400 invalid_payment_proof's message). */
export function parsePaymentProof(raw: string): { ok: true; value: PaymentProofHeader } | { ok: false; message: string } {
  if (raw.length > MAX_PAYMENT_PROOF_LENGTH) return { ok: false, message: `must be at most ${MAX_PAYMENT_PROOF_LENGTH} characters` };
  let json: unknown;
  try {
    json = JSON.parse(raw);
  } catch {
    return { ok: false, message: 'must be a JSON object (spec §2.5)' };
  }
  const parsed = PaymentProofHeaderSchema.safeParse(json);
  if (parsed.success) return { ok: true, value: parsed.data };
  const i = parsed.error.issues[0]!;
  return { ok: false, message: `${i.path.length > 0 ? `field ${i.path.join('.')} ` : ''}${i.message}` };
}


/** Spec §2.2. */
export const ExecutionResultSchema = z.object({
  request_id: z.string(),
  status: StatusSchema,
  smart_wallet_address: z.string(),
  estimated_gas: z.int(),
  /** On an L2, the part of estimated_gas (its preVerificationGas) that pays the chain's L1 data fee (docs/api.md). */
  l1_data_gas: z.number().optional(),
  estimated_cost_usd: z.number(),
  tx_hash: z.string().nullable(),
  message: z.string(),
});
export type ExecutionResult = z.infer<typeof ExecutionResultSchema>;

/** Spec §2.5, on the wire: the X-Payment-Proof header's JSON. */
export const PaymentProofHeaderSchema = z.object({
  request_id: z.string().min(1).max(253, 'must be at most 253 characters').optional(),
  payer: targetContract(`${REQUIRED}`).meta({ description: 'The address that paid' }),
  // A symbol's letters and digits only: the name is looked up among the accepted tokens, and no such name is a
  // key every object has (`__proto__`); the verifier's lookup is by own keys too.
  token: z
    .string({ error: (iss) => (iss.input === undefined ? REQUIRED : 'must be a token symbol') })
    .regex(/^[A-Za-z0-9]{1,16}$/, 'must be a token symbol: 1 to 16 letters and digits, e.g. USDC'),
  chain: ChainSchema,
  tx_hash: z
    .string({ error: (iss) => (iss.input === undefined ? REQUIRED : 'must be a transaction hash') })
    .regex(/^0x[0-9a-fA-F]{64}$/, 'must be a 0x-prefixed 32-byte transaction hash'),
  signature: z
    .string({ error: 'must be a 0x-prefixed hex signature' })
    .regex(/^0x([0-9a-fA-F]{2}){1,4096}$/, 'must be a 0x-prefixed hex signature')
    .optional()
    .meta({
      description:
        'Optional: the payer’s signature (EIP-191 personal_sign; ERC-1271 for a contract wallet) over the proof message ' +
        'of docs/payments.md. It binds the transfer to this request, and is how a transfer made before the quote pays.',
    }),
});
export type PaymentProofHeader = z.output<typeof PaymentProofHeaderSchema>;

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
  /** On an L2, the gas of the quoted operation that pays the chain's L1 data fee (in amount_usd). */
  l1_data_gas: z.number().optional(),
});
export type PaymentRequired = z.infer<typeof PaymentRequiredSchema>;

/**
 * A payment that was refused (spec §7 `payment_verification_failed`, 402): why, whether the same payment may pass
 * later (retryable: not mined or not deep enough yet), and the quote still to pay, as in spec §2.8.
 */
export const PaymentVerificationFailedSchema = z.object({
  error: z.literal('payment_verification_failed'), // first, as in every error body
  ...PaymentRequiredSchema.omit({ error: true }).shape,
  reason: z.string().meta({ description: 'Machine-readable cause; docs/payments.md lists them', examples: ['amount_insufficient'] }),
  message: z.string(),
  retryable: z.boolean().meta({ description: 'The same payment may pass later (retry after Retry-After)' }),
  confirmations_remaining: z.int().optional().meta({ description: 'insufficient_confirmations: blocks still due' }),
});
export type PaymentVerificationFailed = z.infer<typeof PaymentVerificationFailedSchema>;
