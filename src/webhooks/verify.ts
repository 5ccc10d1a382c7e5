import { timingSafeEqual } from 'node:crypto';
import { AgentWalletError } from '../lib/errors.ts';
import type { WebhookEvent } from './event.ts';
import { webhookSigningKey } from './secret.ts';
import { standardSignature } from './sign.ts';

export type WebhookVerificationErrorCode =
  | 'missing_headers'
  | 'invalid_timestamp'
  | 'timestamp_out_of_tolerance'
  | 'no_matching_signature'
  | 'invalid_body';

export class WebhookVerificationError extends AgentWalletError<WebhookVerificationErrorCode> {
  override readonly name = 'WebhookVerificationError';
}

/** Headers as Node's IncomingMessage, fetch's Headers, or a plain object give them; names in any case. */
export type WebhookHeaders = Headers | Readonly<Record<string, string | readonly string[] | undefined>>;

export interface VerifyWebhookOptions {
  /** How far the timestamp may be from now, either way (default 300 s, as Standard Webhooks says). */
  toleranceSeconds?: number;
  /** The receiver's clock, ms since the epoch (default Date.now). */
  now?: () => number;
}

function header(headers: WebhookHeaders, name: string): string | undefined {
  if (typeof (headers as Headers).get === 'function') return (headers as Headers).get(name) ?? undefined;
  for (const [k, v] of Object.entries(headers as Record<string, string | readonly string[] | undefined>)) {
    if (k.toLowerCase() !== name) continue;
    return typeof v === 'string' ? v : v?.join(' ');
  }
  return undefined;
}

const equal = (a: string, b: string): boolean => {
  const x = Buffer.from(a);
  const y = Buffer.from(b);
  return x.length === y.length && timingSafeEqual(x, y);
};

/**
 * Verifies a delivery as a receiver should, before using it: the Standard Webhooks signature
 * (`webhook-signature`, HMAC-SHA256 of `webhook-id.webhook-timestamp.body`) made with `secret` (or any of
 * several, while you rotate), and a timestamp within the tolerance, which is what makes a captured delivery
 * useless to replay later. Returns the parsed event; throws WebhookVerificationError otherwise.
 *
 * Pass the raw body exactly as received (before any JSON parsing): re-serialized JSON rarely has the same
 * bytes. Deduplicate by `webhook-id` (or the event's `id`): a delivery may arrive more than once.
 *
 * @example
 * const event = verifyWebhook(process.env.WEBHOOK_SECRET!, req.headers, rawBody);
 * if (event.type === 'execution.confirmed') markPaid(event.data.request_id, event.data.tx_hash);
 */
export function verifyWebhook(
  secret: string | readonly string[],
  headers: WebhookHeaders,
  rawBody: string | Uint8Array,
  opts: VerifyWebhookOptions = {},
): WebhookEvent {
  const keys = (typeof secret === 'string' ? [secret] : secret).map(webhookSigningKey);
  const id = header(headers, 'webhook-id');
  const timestamp = header(headers, 'webhook-timestamp');
  const signatures = header(headers, 'webhook-signature');
  if (!id || !timestamp || !signatures) {
    throw new WebhookVerificationError('missing_headers', 'webhook-id, webhook-timestamp and webhook-signature are required');
  }
  if (!/^[0-9]{1,15}$/.test(timestamp)) throw new WebhookVerificationError('invalid_timestamp', 'webhook-timestamp must be Unix seconds');
  const seconds = Number(timestamp);
  const tolerance = opts.toleranceSeconds ?? 300;
  const now = Math.floor((opts.now ?? Date.now)() / 1000);
  if (Math.abs(now - seconds) > tolerance) {
    throw new WebhookVerificationError(
      'timestamp_out_of_tolerance',
      `webhook-timestamp is ${now - seconds} s from now; at most ${tolerance} s is accepted`,
    );
  }
  const presented = signatures.split(' ').filter((s) => s.startsWith('v1,'));
  const msg = { id, timestamp: seconds, body: rawBody };
  const matches = keys.some((k) => {
    const expected = standardSignature(k, msg);
    return presented.some((p) => equal(p, expected));
  });
  if (!matches) throw new WebhookVerificationError('no_matching_signature', 'no signature matches the secret');
  try {
    return JSON.parse(typeof rawBody === 'string' ? rawBody : Buffer.from(rawBody).toString('utf8')) as WebhookEvent;
  } catch (e) {
    throw new WebhookVerificationError('invalid_body', 'the signed body is not JSON', { cause: e });
  }
}
