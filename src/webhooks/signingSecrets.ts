import type { ApiClient } from '../api/v1alpha1/index.ts';
import { isStoreError, type ResourceStore } from '../store/types.ts';
import type { WebhookSecretStore } from './secrets/types.ts';

/**
 * The secrets that sign a client's webhooks now: its current secret, and the one a rotation replaced while
 * its overlap lasts (newest first). Stored secrets never change, so each is read once and kept; the ApiClient
 * is looked up at every attempt (in the controller's watched cache when it has one, else in the store), so a
 * rotation takes effect on the next attempt after the watch delivers it.
 */
export interface SigningSecretSource {
  secretsFor(apiClient: string, namespace: string, nowMs: number): Promise<string[]>;
}

export function activeSecretRefs(client: ApiClient, nowMs: number): string[] {
  const signing = client.spec.webhookSigning;
  if (!signing) return [];
  const refs = [signing.current.secretRef];
  const previous = signing.previous;
  if (previous && Date.parse(previous.validUntil) > nowMs && previous.secretRef !== signing.current.secretRef) refs.push(previous.secretRef);
  return refs;
}

export function createSigningSecretSource(
  store: ResourceStore,
  secrets: WebhookSecretStore,
  /** A watched cache of the ApiClients: a client found there is not read from the store. */
  cached?: (namespace: string, apiClient: string) => ApiClient | undefined,
): SigningSecretSource {
  const cache = new Map<string, string>();
  const read = async (ref: string): Promise<string | undefined> => {
    const hit = cache.get(ref);
    if (hit !== undefined) return hit;
    const value = await secrets.read(ref);
    if (value !== undefined) cache.set(ref, value);
    return value;
  };
  return {
    async secretsFor(apiClient, namespace, nowMs) {
      let client = cached?.(namespace, apiClient);
      if (!client) {
        try {
          client = await store.get('ApiClient', apiClient, namespace);
        } catch (e) {
          if (isStoreError(e, 'NotFound')) return [];
          throw e;
        }
      }
      const values = await Promise.all(activeSecretRefs(client, nowMs).map(read));
      return values.filter((v): v is string => v !== undefined);
    },
  };
}
