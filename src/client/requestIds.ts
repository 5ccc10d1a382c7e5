import { idempotentRequestId } from '../api/v1alpha1/requestIds.ts';
import { parseApiKey } from '../keys/apiKey.ts';

/**
 * The request_id the service gives an execute sent with `idempotencyKey` under `apiKey` (docs/api.md,
 * "Idempotency"): derived from the key's client id and the Idempotency-Key, so it is known before the answer.
 * When an execute's answer is lost, `GET /status/<this id>` says whether the request exists (spec 7: look up
 * the request before retrying). Undefined for a key not of the `aw_<id>_<secret>` form.
 */
export function requestIdForIdempotencyKey(apiKey: string | undefined, idempotencyKey: string): string | undefined {
  const parsed = apiKey === undefined ? undefined : parseApiKey(apiKey);
  return parsed && idempotentRequestId(parsed.clientId, idempotencyKey);
}

/** The client id an API key names (its public part), for telling one key's journal entries from another's. */
export function clientIdOf(apiKey: string | undefined): string | undefined {
  return apiKey === undefined ? undefined : parseApiKey(apiKey)?.clientId;
}
