import { z } from 'zod';

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
export const ERROR_STATUSES = {
  400: 'Invalid request (`error` names the problem and `field` the field), or the call failed in simulation: simulation_failed, insufficient_funds',
  401: 'Missing or invalid X-API-Key',
  403: 'Refused for this agent (docs/policies.md): agent_not_allowed (an agent-scoped key, another agent_id), policy_denied (an AgentPolicy rule refused, or none accepted, or a budget would be overrun: `policy`, `rule` and `budget` say which, the message gives the figures; nothing was queued or paid), agent_suspended (the kill switch)',
  404: 'No such resource for this API key',
  413: 'The body is over the size limit: payload_too_large',
  414: 'A path parameter is too long: uri_too_long',
  415: 'The body is not application/json: unsupported_media_type',
  409: 'The request was cancelled by its caller (request_cancelled), or can no longer be cancelled (not_cancellable: signed, or finished)',
  422: 'The Idempotency-Key was used before with a different body (idempotency_key_mismatch), or a payment names a request made with another agent_id or body (payment_request_mismatch)',
  429: 'Rate limited: retry after Retry-After seconds',
  431: 'The request headers are over 32 KiB in total: headers_too_large',
  500: 'Internal error, or the request failed or was not decided before it was queued (execution_failed, decision_timeout: poll GET /status/:id)',
  503: 'A chain or the state store is unavailable: retry with backoff (Retry-After)',
} as const;
export type ErrorStatus = keyof typeof ERROR_STATUSES;
export type ErrorBody = z.infer<typeof ErrorBodySchema>;
