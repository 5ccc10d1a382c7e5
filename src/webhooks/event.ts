import { z } from 'zod';
import { StatusRecordSchema } from '../api/http/status.ts';
import type { ExecutionPhase, ExecutionRequest } from '../api/v1alpha1/index.ts';
import { presentStatus } from '../gateway/presenters.ts';

/**
 * The events a callback_url receives: one per request, when it reaches a terminal state. The payload follows
 * Standard Webhooks' `{type, timestamp, data}` and `data` is the status record of `GET /status/:id`
 * (spec §2.3 with agent_id, strategy_id, smart_wallet_address and the failure). docs/webhooks.md publishes
 * the JSON Schema of WebhookEventSchema (a test keeps the two equal).
 *
 * `version` changes only for a change that could break a receiver (a field removed or retyped); new fields
 * and new event types do not change it, so receivers must ignore what they do not know.
 */
export const WEBHOOK_EVENT_VERSION = 1;

export const WEBHOOK_EVENT_TYPES = ['execution.confirmed', 'execution.reverted', 'execution.failed'] as const;
export type WebhookEventType = (typeof WEBHOOK_EVENT_TYPES)[number];

const EVENT_OF_PHASE: Partial<Record<ExecutionPhase, WebhookEventType>> = {
  Confirmed: 'execution.confirmed',
  Reverted: 'execution.reverted',
  Failed: 'execution.failed',
};

export const WebhookEventSchema = z
  .object({
    id: z.string().meta({ description: 'Event id: equal to the webhook-id header, the same on every delivery attempt' }),
    type: z.enum(WEBHOOK_EVENT_TYPES),
    version: z.literal(WEBHOOK_EVENT_VERSION).meta({ description: 'Payload version; see docs/webhooks.md' }),
    timestamp: z.string().meta({ description: 'When the request reached its terminal state (ISO 8601 UTC)' }),
    data: StatusRecordSchema.meta({ description: 'The status record of GET /status/:id at that moment' }),
  })
  .meta({ title: 'agent-wallet webhook event', description: 'Body of a POST to callback_url' });
export type WebhookEvent = z.infer<typeof WebhookEventSchema>;

/**
 * The JSON Schema docs/webhooks.md publishes. Generated for the input side: it does not forbid fields it does
 * not list, because new fields may appear within a version and receivers must accept them.
 */
export const webhookEventJsonSchema = (): Record<string, unknown> => z.toJSONSchema(WebhookEventSchema, { io: 'input' }) as Record<string, unknown>;

/** The event a request in `phase` sends, if any (only terminal phases send one). */
export const eventTypeOf = (phase: ExecutionPhase | undefined): WebhookEventType | undefined =>
  phase === undefined ? undefined : EVENT_OF_PHASE[phase];

/** The webhook-id of a request's event: derived from the request, so every attempt, on any replica, agrees. */
export const webhookIdOf = (request: ExecutionRequest): string => `evt_${request.metadata.name}`;

/**
 * The event of a terminal request and its exact body. Everything in it comes from the request's terminal
 * state, which never changes, so every attempt sends the same bytes.
 */
export function buildWebhookEvent(request: ExecutionRequest): { event: WebhookEvent; body: string } {
  const type = eventTypeOf(request.status?.phase);
  if (type === undefined) throw new Error(`request ${request.metadata.name} is not in a terminal phase`);
  const data = presentStatus(request);
  const event: WebhookEvent = {
    id: webhookIdOf(request),
    type,
    version: WEBHOOK_EVENT_VERSION,
    timestamp: request.status?.completionTime ? new Date(request.status.completionTime).toISOString() : data.updated_at,
    data,
  };
  return { event, body: JSON.stringify(event) };
}
