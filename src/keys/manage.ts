import type { ApiClient, PaymentMode } from '../api/v1alpha1/index.ts';
import { API_VERSION, DEFAULT_KEY_LIMITS, DEFAULT_NAMESPACE } from '../api/v1alpha1/index.ts';
import { AgentWalletError } from '../lib/errors.ts';
import type { ResourceStore } from '../store/types.ts';
import { isStoreError } from '../store/types.ts';
import { generateApiKey } from './apiKey.ts';

/** Operator actions on API keys. The plain key is returned once, by create and rotate, and stored nowhere. */

export interface KeySummary {
  id: string;
  name: string | undefined;
  mode: PaymentMode;
  enabled: boolean;
  created_at: string | undefined;
  rotated_at: string | undefined;
  revoked_at: string | undefined;
}

export interface CreateKeyOptions {
  mode: PaymentMode;
  name?: string;
  requestsPerSecond?: number;
  burst?: number;
}

export class KeyError extends AgentWalletError<'key_not_found' | 'key_revoked'> {
  override readonly name = 'KeyError';
}

export async function createKey(store: ResourceStore, opts: CreateKeyOptions, namespace = DEFAULT_NAMESPACE) {
  const { apiKey, clientId, keyHash } = generateApiKey();
  const client: ApiClient = {
    apiVersion: API_VERSION,
    kind: 'ApiClient',
    metadata: { name: clientId, namespace },
    spec: {
      ...(opts.name !== undefined && { displayName: opts.name }),
      keyHash,
      paymentMode: opts.mode,
      enabled: true,
      limits: {
        ...DEFAULT_KEY_LIMITS,
        ...(opts.requestsPerSecond !== undefined && { requestsPerSecond: opts.requestsPerSecond }),
        ...(opts.burst !== undefined && { burst: opts.burst }),
      },
    },
  };
  const created = await store.create(client);
  return { api_key: apiKey, key: summarize(created) };
}

export async function listKeys(store: ResourceStore, namespace = DEFAULT_NAMESPACE): Promise<KeySummary[]> {
  const { items } = await store.list('ApiClient', { namespace });
  return items.map(summarize).sort((a, b) => (a.created_at ?? '').localeCompare(b.created_at ?? ''));
}

/** Disables the key at once; its requests in flight still finish. The record stays, for audit. */
export async function revokeKey(store: ResourceStore, id: string, namespace = DEFAULT_NAMESPACE): Promise<KeySummary> {
  const client = await getClient(store, id, namespace);
  const updated = await store.update({ ...client, spec: { ...client.spec, enabled: false } });
  const withStatus = await store.updateStatus({
    ...updated,
    status: { ...(updated.status ?? {}), revokedAt: new Date().toISOString() },
  });
  return summarize(withStatus);
}

/** Issues a new secret for the same client id: the old key stops working, the agents' wallets stay. */
export async function rotateKey(store: ResourceStore, id: string, namespace = DEFAULT_NAMESPACE) {
  const client = await getClient(store, id, namespace);
  if (!client.spec.enabled) throw new KeyError('key_revoked', `key ${id} is revoked; create a new one`);
  const { apiKey, keyHash } = generateApiKey(id);
  const updated = await store.update({ ...client, spec: { ...client.spec, keyHash } });
  const withStatus = await store.updateStatus({
    ...updated,
    status: { ...(updated.status ?? {}), rotatedAt: new Date().toISOString() },
  });
  return { api_key: apiKey, key: summarize(withStatus) };
}

async function getClient(store: ResourceStore, id: string, namespace: string): Promise<ApiClient> {
  try {
    return await store.get('ApiClient', id, namespace);
  } catch (e) {
    if (isStoreError(e, 'NotFound')) throw new KeyError('key_not_found', `no key with id ${id}`);
    throw e;
  }
}

function summarize(c: ApiClient): KeySummary {
  return {
    id: c.metadata.name,
    name: c.spec.displayName,
    mode: c.spec.paymentMode,
    enabled: c.spec.enabled,
    created_at: c.metadata.creationTimestamp,
    rotated_at: c.status?.rotatedAt,
    revoked_at: c.status?.revokedAt,
  };
}
