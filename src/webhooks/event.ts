import { z } from 'zod';
import { StatusRecordSchema } from '../api/http/status.ts';
import { isTerminal, type ExecutionPhase, type ExecutionRequest } from '../api/v1alpha1/index.ts';
import { presentStatus } from '../api/http/presentStatus.ts';

/**
 * The events a callback_url receives: one each time a request's outcome changes — when it reaches a terminal
 * state, and when it leaves one because its inclusion left the chain (`execution.inclusion_lost`; it is then sent
 * again, and its next terminal state is another event). Each event has its own id. The payload follows
 * Standard Webhooks' `{type, timestamp, data}` and `data` is the status record of `GET /status/:id`
 * (spec §2.3 with agent_id, strategy_id, smart_wallet_address and the failure). docs/webhooks.md publishes
 * the JSON Schema of WebhookEventSchema (a test keeps the two equal).
 *
 * `version` changes only for a change that could break a receiver (a field removed or retyped); new fields
 * and new event types do not change it, so receivers must ignore what they do not know.
 */
export const WEBHOOK_EVENT_VERSION = 1;

export const WEBHOOK_EVENT_TYPES = [
  'execution.confirmed',
  'execution.reverted',
  'execution.failed',
  'execution.inclusion_lost',
  // What a keeper did to the order a confirmed perp-v2 request created (status.order; docs/protocols/perp-v2.md).
  'perp.order_executed',
  'perp.order_cancelled',
  'perp.order_frozen',
  // What the keeper did to a deposit or withdrawal of liquidity a confirmed perp-v2 request created (status.order too).
  'perp.deposit_executed',
  'perp.deposit_cancelled',
  'perp.withdrawal_executed',
  'perp.withdrawal_cancelled',
] as const;
export type WebhookEventType = (typeof WEBHOOK_EVENT_TYPES)[number];

const EVENT_OF_PHASE: Partial<Record<ExecutionPhase, WebhookEventType>> = {
  Confirmed: 'execution.confirmed',
  Reverted: 'execution.reverted',
  Failed: 'execution.failed',
};

export const WebhookEventSchema = z
  .object({
    id: z.string().meta({
      description: 'Event id: equal to the webhook-id header, the same on every delivery attempt, unique per event (deduplicate by it)',
    }),
    type: z.enum(WEBHOOK_EVENT_TYPES),
    version: z.literal(WEBHOOK_EVENT_VERSION).meta({ description: 'Payload version; see docs/webhooks.md' }),
    timestamp: z.string().meta({ description: 'When the transition the event reports happened (ISO 8601 UTC)' }),
    data: StatusRecordSchema.meta({ description: 'The status record of GET /status/:id at that moment' }),
  })
  .meta({ title: 'agent-wallet webhook event', description: 'Body of a POST to callback_url' });
export type WebhookEvent = z.infer<typeof WebhookEventSchema>;

/**
 * The JSON Schema docs/webhooks.md publishes. Generated for the input side: it does not forbid fields it does
 * not list, because new fields may appear within a version and receivers must accept them.
 */
export const webhookEventJsonSchema = (): Record<string, unknown> => z.toJSONSchema(WebhookEventSchema, { io: 'input' }) as Record<string, unknown>;

/** The event a request entering `phase` sends, if any (only terminal phases send one on entry). */
export const eventTypeOf = (phase: ExecutionPhase | undefined): WebhookEventType | undefined =>
  phase === undefined ? undefined : EVENT_OF_PHASE[phase];

/**
 * An event about `request` as it stands now and its exact body: `type` (default: the event of its terminal
 * phase) and `id` (default: its first event's). The caller freezes the body where it records the event
 * (status.webhookEvents), so every attempt sends the same bytes whatever the request does afterwards.
 */
export function buildWebhookEvent(
  request: ExecutionRequest,
  opts: { id?: string; type?: WebhookEventType; timestamp?: string } = {},
): { event: WebhookEvent; body: string } {
  const phase = request.status?.phase;
  const type = opts.type ?? eventTypeOf(phase);
  if (type === undefined) throw new Error(`request ${request.metadata.name} is not in a terminal phase`);
  const data = presentStatus(request);
  const completed = isTerminal(phase) ? request.status?.completionTime : undefined;
  const event: WebhookEvent = {
    id: opts.id ?? `evt_${request.metadata.name}`,
    type,
    version: WEBHOOK_EVENT_VERSION,
    timestamp: opts.timestamp ?? (completed ? new Date(completed).toISOString() : data.updated_at),
    data,
  };
  return { event, body: JSON.stringify(event) };
}
