import { z } from 'zod';
import { ChainOut, queryParam } from './common.ts';
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
  l1_data_gas: z.int().optional().meta({ description: 'L2 only: the part of estimated_gas paying the L1 data fee' }),
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
      policy: z
        .object({ name: z.string(), rule: z.string().nullable(), budget: z.string().optional().meta({ description: 'The budget it did not fit (docs/policies.md "Budgets")' }) })
        .optional()
        .meta({ description: 'The AgentPolicy that refused it (policy_denied, agent_suspended) and its rule; rule null: no rule accepted it' }),
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
  order: z
    .object({
      key: z.string().nullable().meta({ description: "The protocol's id of the order (GMX: its order, deposit or withdrawal key); null until the service has found it in the confirmed transaction" }),
      state: z.enum(['pending', 'executed', 'cancelled', 'frozen']).meta({
        description: '`pending` until a keeper acts; `executed` and `cancelled` are final; `frozen` may still be executed or cancelled',
      }),
      settles: z.enum(['next_price', 'at_trigger']).meta({
        description:
          '`next_price`: the keeper acts at its next price (a market order: seconds; a status wait goes on until then); `at_trigger`: when the price reaches the trigger (a limit order)',
      }),
      fill_price: z.string().nullable().meta({ description: 'The price it executed at (perp-v2 orders: USD per index token, decimal; null for a deposit or withdrawal)' }),
      reason: z.string().nullable().meta({ description: 'Why it was cancelled or frozen, as the protocol says it (perp-v2: the error name)' }),
      tx_hash: z.string().nullable().meta({ description: "The keeper's transaction that executed, cancelled or froze it" }),
      updated_at: z.string().meta({ description: 'When it entered its state (as found)' }),
    })
    .optional()
    .meta({
      description:
        'Present only for an action whose protocol settles orders later (perp-v2 orders, deposits and withdrawals): `status` is `confirmed` once the order is ' +
        'created, and what the keeper then did is told here and by its own webhook events (docs/protocols/perp-v2.md)',
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

/** The longest `GET /status/:id` wait, in seconds: below the 60 s a host or proxy commonly gives one call. */
export const MAX_STATUS_WAIT_SECONDS = 30;
/** The states after which a request does not move on its own: a wait answers them at once. */
export const TERMINAL_STATUSES: readonly RequestStatus[] = ['confirmed', 'reverted', 'failed'];

/**
 * Whether a wait for a request is over: a terminal status, and no order of it that its protocol's keeper settles at
 * its next price still pending (a perp-v2 market order: `confirmed` once created, executed or cancelled seconds
 * later). A limit order waits for its price for as long as it takes: its creation ends the wait.
 */
export const isSettled = (record: Pick<StatusRecord, 'status' | 'order'>): boolean =>
  TERMINAL_STATUSES.includes(record.status) && !(record.order?.state === 'pending' && record.order.settles === 'next_price');

const WAIT_MESSAGE = `must be a whole number of seconds, 0 to ${MAX_STATUS_WAIT_SECONDS} (more is taken as ${MAX_STATUS_WAIT_SECONDS})`;

/** Whole seconds as text (`wait=N`), clamped to the longest wait; anything else is `invalid_wait`. */
export function parseWaitSeconds(text: string): number | undefined {
  return /^[0-9]{1,9}$/.test(text) ? Math.min(Number(text), MAX_STATUS_WAIT_SECONDS) : undefined;
}

/** A `wait` preference whose value is not whole seconds, anywhere in a Prefer header (RFC 7240: `token [= value] *(; param)`). */
const MALFORMED_WAIT = String.raw`(?:^|,)[ \t]*[Ww][Aa][Ii][Tt][ \t]*(?:=[ \t]*(?!(?:[0-9]{1,9}|"[0-9]{1,9}")[ \t]*(?:[;,]|$))|[;,]|$)`;
/**
 * HTTP's optional whitespace (space, tab) off both ends: what the published patterns allow there, no more. A scan,
 * not a regex: `[ \t]+$` is tried at every blank of a long run before a non-blank, quadratic in the header's length
 * (a 15 KB Prefer of blanks took 350 ms of CPU to refuse).
 */
function blanksOff(text: string): string {
  const blank = (c: string | undefined) => c === ' ' || c === '\t';
  let start = 0;
  let end = text.length;
  while (start < end && blank(text[start])) start++;
  while (end > start && blank(text[end - 1])) end--;
  return text.slice(start, end);
}

/** The Prefer headers accepted: any, unless a `wait` in it is malformed (published as the header's pattern). */
export const PREFER_PATTERN = new RegExp(String.raw`^(?![\s\S]*${MALFORMED_WAIT})[\s\S]*$`);

/**
 * The `wait` preference of an RFC 7240 `Prefer` header (`Prefer: wait=10`, also among others: `respond-async,
 * wait=10`): its seconds (clamped), undefined when there is none, or `invalid` when a `wait` is not whole seconds.
 */
export function preferredWait(prefer: string): number | 'invalid' | undefined {
  if (!PREFER_PATTERN.test(prefer)) return 'invalid';
  for (const preference of prefer.split(',')) {
    const [token, ...rest] = preference.split(';')[0]!.split('=');
    if (blanksOff(token!).toLowerCase() !== 'wait') continue;
    return parseWaitSeconds(blanksOff(rest.join('=')).replace(/^"(.*)"$/, '$1')) ?? 'invalid';
  }
  return undefined;
}

const ENTITY_TAG = String.raw`(?:W/)?"[\x21\x23-\x7e]*"`;
/**
 * The If-None-Match headers accepted (published as the header's pattern): entity tags, or `*`. Blanks are HTTP's
 * (space, tab), never `\s`: engines differ on what `\s` takes (Python's takes \x1c-\x1f), and the published
 * pattern must give every client's validator the verdict this one gives. A blank one names no tag: nothing is
 * known, so the record differs from all it names (an HTTP client may send an empty header; schemathesis does).
 */
export const IF_NONE_MATCH_PATTERN = new RegExp(String.raw`^[ \t]*(?:(?:\*|${ENTITY_TAG}(?:[ \t]*,[ \t]*${ENTITY_TAG})*)[ \t]*)?$`);

/** The entity tags of an If-None-Match (`"a", W/"b"` or `*`), weak ones compared as strong; undefined if malformed. */
export function parseIfNoneMatch(header: string): string[] | '*' | undefined {
  if (!IF_NONE_MATCH_PATTERN.test(header)) return undefined;
  if (blanksOff(header) === '*') return '*';
  return [...header.matchAll(/"[\x21\x23-\x7e]*"/g)].map((m) => m[0]);
}

const customIssue = (code: string, message: string) => ({ code: 'custom' as const, message, params: { code } });

export const StatusQuerySchema = z.object({
  wait: queryParam(
    z
      .string()
      .transform((v, ctx) => parseWaitSeconds(v) ?? (ctx.addIssue({ ...customIssue('invalid_wait', WAIT_MESSAGE), input: v }), z.NEVER))
      .optional()
      .meta({
        description:
          `Long poll: wait up to this many seconds (0 to ${MAX_STATUS_WAIT_SECONDS}; more is taken as ${MAX_STATUS_WAIT_SECONDS}) for the ` +
          'record to differ from the state named by known_status or If-None-Match. Same as `Prefer: wait=N` (this wins when both are sent).',
        pattern: '^[0-9]{1,9}$',
        examples: ['10'],
      }),
  ),
  known_status: queryParam(
    z
      .string()
      .refine((v): v is RequestStatus => (STATUSES as readonly string[]).includes(v), {
        message: `must be one of ${STATUSES.join(', ')}`,
        params: { code: 'invalid_known_status' },
      })
      .optional()
      .meta({ description: 'With a wait: the status the caller last saw; the answer comes when the status is another one.', enum: [...STATUSES] }),
  ),
});

export const StatusHeadersSchema = z.looseObject({
  prefer: z
    .string()
    .optional()
    .superRefine((v, ctx) => {
      if (v !== undefined && preferredWait(v) === 'invalid') ctx.addIssue({ ...customIssue('invalid_wait', `wait ${WAIT_MESSAGE}`), input: v });
    })
    .meta({
      pattern: PREFER_PATTERN.source,
      description: `RFC 7240: \`wait=N\` is the same as \`?wait=N\`; the answer then carries \`Preference-Applied: wait=N\`. Other preferences are ignored.`,
    }),
  'if-none-match': z
    .string()
    .optional()
    .superRefine((v, ctx) => {
      if (v !== undefined && parseIfNoneMatch(v) === undefined) {
        ctx.addIssue({ ...customIssue('invalid_if_none_match', 'must be entity tags as ETag gives them ("…", comma-separated) or *'), input: v });
      }
    })
    .meta({
      pattern: IF_NONE_MATCH_PATTERN.source,
      description:
        'With a wait: the ETag of the record the caller last saw; the answer comes when the record is another one. Without a wait it ' +
        'is ignored (the answer is always 200 with the record, never 304).',
    }),
});
