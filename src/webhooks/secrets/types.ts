import { randomBytes } from 'node:crypto';

/**
 * Where webhook signing secrets live: only where the webhook sender can read them, never in a resource's
 * spec or status and never in a log. Each secret is stored once, under a reference of its own, and never
 * changed: a rotation stores a new one and points the ApiClient at it (spec.webhookSigning). Immutable
 * entries let the sender cache a secret for as long as it runs, and in a cluster they let the key
 * management CLI run with `create` on Secrets and no `get`: it can add a secret but read none.
 *
 *   embedded: a file per secret in <data-dir>/webhook-secrets/ (mode 0600, the directory 0700)
 *   cluster:  an immutable Secret per secret in the release namespace (read by the controller's Role)
 */
export interface WebhookSecretStore {
  /** Stores a new secret of the API client; resolves to its reference. */
  create(clientId: string, secret: string): Promise<string>;
  /** The secret a reference names; undefined when there is none. */
  read(ref: string): Promise<string | undefined>;
}

/** References name files and Secrets alike: `whsec-<client id>-<16 hex>` is a valid DNS-1123 name. */
export const SECRET_REF = /^whsec-[a-z0-9]{1,40}-[0-9a-f]{16}$/;

export const newSecretRef = (clientId: string): string => `whsec-${clientId}-${randomBytes(8).toString('hex')}`;
