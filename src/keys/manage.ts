import type { AgentScope, ApiClient, PaymentMode } from '../api/v1alpha1/index.ts';
import { API_VERSION, DEFAULT_KEY_LIMITS, DEFAULT_NAMESPACE } from '../api/v1alpha1/index.ts';
import { AgentWalletError } from '../lib/errors.ts';
import type { ResourceStore } from '../store/types.ts';
import { isStoreError } from '../store/types.ts';
import { retryOnConflict } from '../runtime/retry.ts';
import { generateWebhookSecret } from '../webhooks/secret.ts';
import type { WebhookSecretStore } from '../webhooks/secrets/types.ts';
import { generateApiKey } from './apiKey.ts';

/**
 * Operator actions on API keys. The plain key is returned once, by create and rotate, and stored nowhere.
 * The webhook signing secret is returned once too (by create and rotate-webhook-secret), and stored only in
 * the WebhookSecretStore, which the webhook sender reads; the ApiClient holds its reference.
 */

/** How long a replaced webhook secret keeps signing (as a second signature) after a rotation, by default. */
export const DEFAULT_WEBHOOK_SECRET_OVERLAP_SECONDS = 24 * 3600;

export interface KeySummary {
  id: string;
  name: string | undefined;
  mode: PaymentMode;
  enabled: boolean;
  created_at: string | undefined;
  rotated_at: string | undefined;
  revoked_at: string | undefined;
  /** When the secret that signs its webhooks was created; undefined: it has none (see rotate-webhook-secret). */
  webhook_secret_created_at: string | undefined;
  /** Until when the secret a rotation replaced still signs too. */
  webhook_previous_secret_valid_until: string | undefined;
  /** The agent ids the key may act for; undefined: any (docs/policies.md). */
  agent_scope: AgentScope | undefined;
}

export interface CreateKeyOptions {
  mode: PaymentMode;
  name?: string;
  requestsPerSecond?: number;
  burst?: number;
  /** Bind the key to one agent id, or to the agent ids with a prefix: it can act for no other. */
  agentScope?: AgentScope;
}

export class KeyError extends AgentWalletError<'key_not_found' | 'key_revoked'> {
  override readonly name = 'KeyError';
}

/**
 * Creates a key, and with `webhookSecrets` its webhook signing secret (stored first: a key is never created
 * pointing at a secret that is not there).
 */
export async function createKey(
  store: ResourceStore,
  opts: CreateKeyOptions,
  namespace = DEFAULT_NAMESPACE,
  webhookSecrets?: WebhookSecretStore,
): Promise<{ api_key: string; webhook_secret?: string; key: KeySummary }> {
  const { apiKey, clientId, keyHash } = generateApiKey();
  const webhookSecret = webhookSecrets ? generateWebhookSecret() : undefined;
  const secretRef = webhookSecrets && webhookSecret ? await webhookSecrets.create(clientId, webhookSecret) : undefined;
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
      ...(secretRef !== undefined && { webhookSigning: { current: { secretRef, createdAt: new Date().toISOString() } } }),
      ...(opts.agentScope !== undefined && { agentScope: opts.agentScope }),
    },
  };
  const created = await store.create(client);
  return { api_key: apiKey, ...(webhookSecret !== undefined && { webhook_secret: webhookSecret }), key: summarize(created) };
}

/**
 * Issues a new webhook signing secret for a key (or its first one). The secret it replaces keeps signing, as a
 * second signature on every delivery, for `overlapSeconds` (0: it stops at once), so receivers can move to the
 * new one without rejecting a delivery meanwhile. A secret replaced earlier, still in its overlap, stops now:
 * two sign at most.
 */
export async function rotateWebhookSecret(
  store: ResourceStore,
  webhookSecrets: WebhookSecretStore,
  id: string,
  opts: { overlapSeconds?: number } = {},
  namespace = DEFAULT_NAMESPACE,
): Promise<{ webhook_secret: string; key: KeySummary }> {
  const overlapSeconds = opts.overlapSeconds ?? DEFAULT_WEBHOOK_SECRET_OVERLAP_SECONDS;
  if (!(overlapSeconds >= 0)) throw new RangeError(`overlapSeconds must be 0 or more, got ${overlapSeconds}`);
  const client = await getClient(store, id, namespace);
  if (!client.spec.enabled) throw new KeyError('key_revoked', `key ${id} is revoked; create a new one`);
  const webhookSecret = generateWebhookSecret();
  const secretRef = await webhookSecrets.create(id, webhookSecret);
  const updated = await retryOnConflict(async () => {
    const c = await getClient(store, id, namespace);
    const now = Date.now();
    const current = c.spec.webhookSigning?.current;
    const previous =
      current && overlapSeconds > 0
        ? { secretRef: current.secretRef, createdAt: current.createdAt, validUntil: new Date(now + overlapSeconds * 1000).toISOString() }
        : undefined;
    return store.update({
      ...c,
      spec: {
        ...c.spec,
        webhookSigning: { current: { secretRef, createdAt: new Date(now).toISOString() }, ...(previous && { previous }) },
      },
    });
  });
  return { webhook_secret: webhookSecret, key: summarize(updated) };
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

/**
 * Gives a key another payment mode. New requests are priced under it at once; the key's requests waiting for a
 * payment take it too (the execution controller watches keys: docs/payments.md); those past payment keep theirs.
 */
export async function setKeyMode(store: ResourceStore, id: string, mode: PaymentMode, namespace = DEFAULT_NAMESPACE): Promise<KeySummary> {
  const updated = await retryOnConflict(async () => {
    const c = await getClient(store, id, namespace);
    if (!c.spec.enabled) throw new KeyError('key_revoked', `key ${id} is revoked; create a new one`);
    return c.spec.paymentMode === mode ? c : store.update({ ...c, spec: { ...c.spec, paymentMode: mode } });
  });
  return summarize(updated);
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
    webhook_secret_created_at: c.spec.webhookSigning?.current.createdAt,
    webhook_previous_secret_valid_until: c.spec.webhookSigning?.previous?.validUntil,
    agent_scope: c.spec.agentScope,
  };
}
