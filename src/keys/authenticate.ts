import { DEFAULT_NAMESPACE, type ApiClient } from '../api/v1alpha1/index.ts';
import type { ResourceStore } from '../store/types.ts';
import { isStoreError } from '../store/types.ts';
import { parseApiKey, secretMatches } from './apiKey.ts';

export type AuthFailure = 'missing' | 'invalid';
export type AuthResult = { ok: true; client: ApiClient } | { ok: false; reason: AuthFailure };

/** Resolves an X-API-Key header value to its enabled ApiClient. Unknown, malformed and disabled keys look alike. */
export async function authenticateApiKey(
  store: ResourceStore,
  header: string | undefined,
  namespace = DEFAULT_NAMESPACE,
  /** A watched view of the ApiClients (the gateway's): a client found there is not read from the store. */
  cached?: (clientId: string) => ApiClient | undefined,
): Promise<AuthResult> {
  if (header === undefined || header.trim() === '') return { ok: false, reason: 'missing' };
  const parsed = parseApiKey(header);
  if (!parsed) return { ok: false, reason: 'invalid' };
  let client = cached?.(parsed.clientId);
  if (!client) {
    try {
      client = await store.get('ApiClient', parsed.clientId, namespace);
    } catch (e) {
      if (isStoreError(e, 'NotFound')) return { ok: false, reason: 'invalid' };
      throw e;
    }
  }
  if (!client.spec.enabled || !secretMatches(parsed.secret, client.spec.keyHash)) return { ok: false, reason: 'invalid' };
  return { ok: true, client };
}
