import { createHash } from 'node:crypto';
import { isObjectName } from './names.ts';
import { ulid, ulidAt, ulidTimeMs } from '../../lib/ulid.ts';

/**
 * Request ids are ExecutionRequest resource names, so they must be DNS-1123 subdomains. Fresh ids are `req-` + a
 * lowercase ULID, monotonic within this gateway process (so ids sort in acceptance order, even within one
 * millisecond) and unguessable. Ids of requests sent with an Idempotency-Key are derived from (client, key)
 * instead, so the store's create-if-absent makes a retried request land on the first one without any race;
 * those are deterministic, not time-sortable (the acceptance annotation carries their order).
 */
const REQUEST_ID = /^req-([0-9a-hjkmnp-tv-z]{26})$/;

/** A fresh request id; `now` encodes a given time instead (tests), without the process's monotonic order. */
export function newRequestId(now?: number): string {
  return `req-${now === undefined ? ulid() : ulidAt(now)}`;
}

/** Id of a stateless simulation: not a resource name, so `GET /status/:id` answers 404 for it. */
export function newSimulationId(): string {
  return `sim_${ulid()}`;
}

/** The deterministic request id for (client, Idempotency-Key). */
export function idempotentRequestId(apiClient: string, idempotencyKey: string): string {
  const digest = createHash('sha256').update(`${apiClient}\n${idempotencyKey}`, 'utf8').digest('hex');
  return `req-idem-${digest.slice(0, 40)}`;
}

/** The time (ms) a fresh request id carries, or undefined for any other id (e.g. an Idempotency-Key's). */
export function requestIdTimeMs(id: string | undefined): number | undefined {
  const m = id === undefined ? null : REQUEST_ID.exec(id);
  return m ? ulidTimeMs(m[1]!) : undefined;
}

/** Whether a path id could name an ExecutionRequest at all; anything else is answered 404 without a lookup. */
export const isResourceName = isObjectName;

/** Label value for an agent id: agent ids are free text, label values are not. */
export function agentHash(agentId: string): string {
  return createHash('sha256').update(agentId, 'utf8').digest('hex').slice(0, 16);
}
