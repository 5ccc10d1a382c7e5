import { createHash, randomBytes } from 'node:crypto';

/**
 * Request ids are ExecutionRequest resource names, so they must be DNS-1123 subdomains (lowercase
 * alphanumerics and '-', at most 253 chars). Fresh ids are `req-` + a lowercase ULID: 48 bits of milliseconds
 * then 80 random bits in Crockford base32, so ids sort by creation time and cannot be guessed. Ids of requests
 * sent with an Idempotency-Key are derived from (client, key) instead, so the store's create-if-absent makes
 * a retried request land on the first one without any race; those are deterministic, not time-sortable.
 */
const CROCKFORD = '0123456789abcdefghjkmnpqrstvwxyz';
export const DNS_1123_SUBDOMAIN = /^[a-z0-9]([-a-z0-9]*[a-z0-9])?(\.[a-z0-9]([-a-z0-9]*[a-z0-9])?)*$/;
export const REQUEST_ID_MAX_LENGTH = 253;

/** A 26-character lowercase ULID for `now`. */
export function ulid(now: number = Date.now()): string {
  let time = '';
  let t = Math.floor(now);
  for (let i = 0; i < 10; i++) {
    time = CROCKFORD[t % 32]! + time;
    t = Math.floor(t / 32);
  }
  // 80 random bits = 16 base32 digits; take 5 bits from each of 16 random bytes (bias-free: 256 % 32 == 0).
  const bytes = randomBytes(16);
  let rand = '';
  for (const b of bytes) rand += CROCKFORD[b % 32]!;
  return time + rand;
}

export function newRequestId(now?: number): string {
  return `req-${ulid(now)}`;
}

/** Id of a stateless simulation: not a resource name, so `GET /status/:id` answers 404 for it. */
export function newSimulationId(now?: number): string {
  return `sim_${ulid(now)}`;
}

/** The deterministic request id for (client, Idempotency-Key). */
export function idempotentRequestId(apiClient: string, idempotencyKey: string): string {
  const digest = createHash('sha256').update(`${apiClient}\n${idempotencyKey}`, 'utf8').digest('hex');
  return `req-idem-${digest.slice(0, 40)}`;
}

/** Whether a path id could name an ExecutionRequest at all; anything else is answered 404 without a lookup. */
export function isResourceName(id: string): boolean {
  return id.length <= REQUEST_ID_MAX_LENGTH && DNS_1123_SUBDOMAIN.test(id);
}

/** Label value for an agent id: agent ids are free text, label values are not. */
export function agentHash(agentId: string): string {
  return createHash('sha256').update(agentId, 'utf8').digest('hex').slice(0, 16);
}
