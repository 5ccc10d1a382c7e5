import { z } from 'zod';
import { ChainOut } from './common.ts';
import { DNS1123_SUBDOMAIN, OBJECT_NAME_MAX_LENGTH } from '../v1alpha1/index.ts';

/** Spec §3: the states of a request, as `status` says them. */
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
export const StatusSchema = z.enum(STATUSES);

export const StatusParamsSchema = z.object({
  id: z
    .string()
    .meta({
      description:
        'request_id from POST /execute. Request ids are DNS-1123 names (`req-...`); any other id, e.g. a ' +
        'simulation\'s `sim_...`, names nothing: 404.',
      pattern: DNS1123_SUBDOMAIN.source,
      maxLength: OBJECT_NAME_MAX_LENGTH,
      examples: ['req-01j9z3k5x8d4q2w7e6r5t4y3u2'],
    }),
});


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
  failure: z
    .object({
      code: z.string(),
      message: z.string(),
      revert_reason: z.string().nullable(),
      protocol_error: z
        .object({ protocol: z.string(), name: z.string(), code: z.string().optional(), message: z.string() })
        .optional()
        .meta({ description: "A protocol action's revert, decoded by its family (as in the 400 of its simulation)" }),
    })
    .nullable(),
  credit: z
    .object({
      amount_usd: z.number(),
      expires_at: z.string(),
      used_by: z.string().nullable().meta({ description: 'The request the credit paid, once one has' }),
    })
    .nullable()
    .meta({
      description:
        'A request that was paid and then failed without executing keeps the payment as a credit: it pays the next request ' +
        'of the same key and agent_id, made before expires_at, that costs no more (docs/payments.md)',
    }),
  action: z
    .object({
      name: z.string().meta({ description: '`<slug>/<action>`, e.g. `lend-b-v3/borrow`' }),
      input: z.record(z.string(), z.unknown()).meta({ description: 'What the caller asked, as the endpoint normalized it; bounds the plan derived are absolute here' }),
    })
    .optional()
    .meta({ description: 'Present only for a request made through a protocol action (`/protocols/...`): the action, with its input' }),
  history: z
    .array(z.object({ status: StatusSchema, at: z.string() }))
    .meta({
      description:
        'The transitions of the request, oldest first: `pending` at `created_at`, then each state it entered and when (at most ' +
        'the 16 newest after `pending`). A request stored before transitions were kept shows `pending` and its current state at `updated_at`',
    }),
  cancel_requested_at: z
    .string()
    .optional()
    .meta({ description: 'Present only when its caller asked to cancel it (POST /status/:id/cancel): when' }),
  lost_inclusions: z
    .array(z.object({ tx_hash: z.string(), block_number: z.string(), lost_at: z.string() }))
    .optional()
    .meta({
      description:
        'Present only when an inclusion this request reported left the chain afterwards (a chain that lost blocks): each such ' +
        'transaction, its block, and when that was found. The request was then sent again, or failed (docs/api.md)',
    }),
});
export type StatusRecord = z.infer<typeof StatusRecordSchema>;

/** Why a request can no longer be cancelled (409 `not_cancellable` of POST /status/:id/cancel). */
export const NOT_CANCELLABLE_REASONS = ['signed', 'finished'] as const;

/** 409 of POST /status/:id/cancel: the error body, with the state that makes it too late. */
export const NotCancellableSchema = z
  .object({
    error: z.literal('not_cancellable'),
    message: z.string().meta({ description: 'Why, in words: signed at …, broadcast as …; or finished as …' }),
    request_id: z.string(),
    reason: z.enum(NOT_CANCELLABLE_REASONS).meta({
      description: '`signed`: its operation was signed (a nonce spent), it will run; `finished`: it reached a final state first',
    }),
    status: StatusSchema.meta({ description: 'Its state when the cancel was decided' }),
    signed_at: z.string().nullable().meta({ description: 'When its operation was signed (reason `signed`)' }),
    tx_hash: z.string().nullable().meta({ description: 'The transaction it was broadcast in, once known' }),
  })
  .meta({ id: 'NotCancellable' });
export type NotCancellable = z.infer<typeof NotCancellableSchema>;
