import { randomBytes } from 'node:crypto';
import { AgentWalletError } from '../lib/errors.ts';

/**
 * Webhook signing secrets, in the Standard Webhooks format: `whsec_` + base64 of the key bytes. The key that
 * signs is the decoded bytes, for both signatures we send (see sign.ts), never the string itself.
 *
 * Decoding is strict: a secret that is not canonical base64, or whose key is shorter than 24 bytes, is
 * refused rather than used. Lenient decoders have turned a mistyped secret into a 1-byte HMAC key
 * (openai-node PR #1887); a strict one turns it into an error the operator sees.
 */
export const WEBHOOK_SECRET_PREFIX = 'whsec_';
/** Key bytes of the secrets we generate: 32, the HMAC-SHA256 output size (the standard asks 24 to 64). */
const SECRET_BYTES = 32;
const MIN_KEY_BYTES = 24;
const MAX_KEY_BYTES = 64;
const BASE64 = /^(?:[A-Za-z0-9+/]{4})*(?:[A-Za-z0-9+/]{2}==|[A-Za-z0-9+/]{3}=)?$/;

export class WebhookSecretError extends AgentWalletError<'invalid_webhook_secret'> {
  override readonly name = 'WebhookSecretError';
}

/** A fresh signing secret: shown once to the operator, stored only where the webhook sender reads it. */
export function generateWebhookSecret(): string {
  return WEBHOOK_SECRET_PREFIX + randomBytes(SECRET_BYTES).toString('base64');
}

/** The HMAC key of a `whsec_…` secret; throws WebhookSecretError for anything else. */
export function webhookSigningKey(secret: string): Buffer {
  const trimmed = secret.trim();
  if (!trimmed.startsWith(WEBHOOK_SECRET_PREFIX)) {
    throw new WebhookSecretError('invalid_webhook_secret', `a webhook secret starts with ${WEBHOOK_SECRET_PREFIX}`);
  }
  const encoded = trimmed.slice(WEBHOOK_SECRET_PREFIX.length);
  if (!BASE64.test(encoded)) {
    throw new WebhookSecretError('invalid_webhook_secret', `the part after ${WEBHOOK_SECRET_PREFIX} must be standard base64`);
  }
  const key = Buffer.from(encoded, 'base64');
  if (key.length < MIN_KEY_BYTES || key.length > MAX_KEY_BYTES) {
    throw new WebhookSecretError(
      'invalid_webhook_secret',
      `a webhook secret holds ${MIN_KEY_BYTES} to ${MAX_KEY_BYTES} key bytes; this one holds ${key.length}`,
    );
  }
  return key;
}
