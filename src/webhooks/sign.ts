import { createHmac } from 'node:crypto';
import { webhookSigningKey } from './secret.ts';

/** The headers of one signed delivery attempt (a type, not an interface: it is a header record too). */
export type WebhookSignatureHeaders = {
  /** The message id: the same on every attempt of one event, so receivers deduplicate by it. */
  'webhook-id': string;
  /** Unix seconds of this attempt: receivers reject old ones (replays). */
  'webhook-timestamp': string;
  /** `v1,<base64 HMAC-SHA256 of "id.timestamp.body">`, one per active secret, space-separated. */
  'webhook-signature': string;
  /** Spec §6.2: `sha256=<hex HMAC-SHA256 of the body>`, one per active secret, space-separated. */
  'x-webhook-signature': string;
};

export interface WebhookMessage {
  id: string;
  /** Seconds since the epoch: each attempt signs with its own. */
  timestamp: number;
  /** The exact bytes sent. */
  body: string | Uint8Array;
}

const bytes = (b: string | Uint8Array): Buffer => (typeof b === 'string' ? Buffer.from(b, 'utf8') : Buffer.from(b));

/** The Standard Webhooks content: `id.timestamp.body`, over the body's exact bytes. */
export function signedContent(msg: WebhookMessage): Buffer {
  return Buffer.concat([Buffer.from(`${msg.id}.${msg.timestamp}.`, 'utf8'), bytes(msg.body)]);
}

export const standardSignature = (key: Buffer, msg: WebhookMessage): string =>
  `v1,${createHmac('sha256', key).update(signedContent(msg)).digest('base64')}`;

export const bodySignature = (key: Buffer, body: string | Uint8Array): string =>
  `sha256=${createHmac('sha256', key).update(bytes(body)).digest('hex')}`;

/**
 * Signs one attempt with every active secret (two during a rotation's overlap, newest first), in both forms:
 * the Standard Webhooks headers, whose MAC covers the id and the timestamp so a receiver can refuse replays,
 * and spec §6.2's `X-Webhook-Signature`, a MAC of the body alone, for receivers written against the spec.
 */
export function signWebhook(msg: WebhookMessage, secrets: readonly string[]): WebhookSignatureHeaders {
  if (secrets.length === 0) throw new RangeError('signWebhook needs at least one secret');
  const keys = secrets.map(webhookSigningKey);
  return {
    'webhook-id': msg.id,
    'webhook-timestamp': String(msg.timestamp),
    'webhook-signature': keys.map((k) => standardSignature(k, msg)).join(' '),
    'x-webhook-signature': keys.map((k) => bodySignature(k, msg.body)).join(' '),
  };
}
