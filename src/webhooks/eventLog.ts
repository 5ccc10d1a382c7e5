import {
  isFinalDeliveryState,
  isTerminal,
  type ExecutionPhase,
  type ExecutionRequest,
  type ExecutionRequestStatus,
  type WebhookDeliveryState,
  type WebhookEventRecord,
} from '../api/v1alpha1/index.ts';
import { buildWebhookEvent, eventTypeOf, type WebhookEventType } from './event.ts';

/**
 * The events a request owes its callback URL (status.webhookEvents): which transition owes one, their ids, and
 * how a request recorded before events were a list (one event, its delivery in status.webhook) reads as one.
 */

/**
 * The id of a request's event at `index` (0-based): the first keeps `evt_<request_id>`, the id a request's one
 * event always had (so a delivery in flight across an upgrade keeps its id); later ones are `evt_<request_id>_<n>`.
 */
export const webhookEventId = (requestName: string, index: number): string =>
  index === 0 ? `evt_${requestName}` : `evt_${requestName}_${index + 1}`;

/**
 * The event a phase change owes: entering a terminal phase, its outcome (`execution.confirmed` …); leaving a
 * terminal phase for a non-terminal one (its inclusion left the chain and it is sent again),
 * `execution.inclusion_lost`. A move between two terminal phases is the new outcome's event.
 */
export function transitionEventType(from: ExecutionPhase | undefined, to: ExecutionPhase | undefined): WebhookEventType | undefined {
  if (from === to) return undefined;
  if (isTerminal(to)) return eventTypeOf(to);
  if (isTerminal(from)) return 'execution.inclusion_lost';
  return undefined;
}

/** Delivery fields of what a request owes, without building a body: what the planner and the metrics read. */
export interface OwedDelivery {
  state?: WebhookDeliveryState | undefined;
  nextAttemptTime?: string | undefined;
}

/** The delivery states of the events a request owes, in order (a legacy request's one event included). */
export function owedDeliveries(r: ExecutionRequest): readonly OwedDelivery[] {
  if (r.spec.callbackUrl === undefined) return [];
  const list = r.status?.webhookEvents;
  if (list !== undefined && list.length > 0) return list;
  if (!isTerminal(r.status?.phase)) return [];
  return [r.status?.webhook ?? {}];
}

/** The index of the first event whose delivery is not final, or -1 when nothing is owed. */
export const nextOwedIndex = (r: ExecutionRequest): number => owedDeliveries(r).findIndex((d) => !isFinalDeliveryState(d.state));

/**
 * The events a request owes, in order, bodies included. A request recorded before events were a list owes one,
 * built from its terminal state (which it has kept since: the body is the one its earlier attempts sent), with
 * status.webhook's delivery.
 */
export function owedEvents(r: ExecutionRequest): WebhookEventRecord[] {
  if (r.spec.callbackUrl === undefined) return [];
  const list = r.status?.webhookEvents;
  if (list !== undefined && list.length > 0) return list;
  if (!isTerminal(r.status?.phase)) return [];
  const { event, body } = buildWebhookEvent(r, { id: webhookEventId(r.metadata.name, 0) });
  const legacy = r.status?.webhook;
  return [{ ...(legacy ?? { attempts: 0 }), id: event.id, event: event.type, time: event.timestamp, body }];
}

/**
 * `next` (the status a writer is about to store for `before`) with the event its transition owes appended, its
 * body built from the request as it will be. Called by every status write that can move a phase, so an event is
 * recorded in the same write as its transition and none is missed however fast the request moves on. A legacy
 * status.webhook becomes the first entry of the list.
 */
export function withTransitionEvent(before: ExecutionRequest, next: ExecutionRequestStatus): ExecutionRequestStatus {
  if (before.spec.callbackUrl === undefined) return next;
  const type = transitionEventType(before.status?.phase, next.phase);
  if (type === undefined) return next;
  const earlier = owedEvents(before);
  const id = webhookEventId(before.metadata.name, earlier.length);
  const { event, body } = buildWebhookEvent({ ...before, status: next }, { id, type });
  const { webhook: _legacy, ...rest } = next;
  return { ...rest, webhookEvents: [...earlier, { id, event: type, time: event.timestamp, body, attempts: 0 }] };
}

/**
 * `next` with an event about the request's order appended (status.order changed state: `perp.order_executed` …),
 * its body the request as it will be, its timestamp when the order changed. In the same write as the change.
 */
export function withOrderEvent(before: ExecutionRequest, next: ExecutionRequestStatus, type: WebhookEventType, timestamp: string): ExecutionRequestStatus {
  if (before.spec.callbackUrl === undefined) return next;
  const earlier = owedEvents(before);
  const id = webhookEventId(before.metadata.name, earlier.length);
  const { event, body } = buildWebhookEvent({ ...before, status: next }, { id, type, timestamp });
  const { webhook: _legacy, ...rest } = next;
  return { ...rest, webhookEvents: [...earlier, { id, event: type, time: event.timestamp, body, attempts: 0 }] };
}
