import { createHmac } from 'node:crypto';
import { Webhook, WebhookVerificationError as StandardError } from 'standardwebhooks';
import { describe, expect, it } from 'vitest';
import { generateWebhookSecret, webhookSigningKey, WebhookSecretError } from './secret.ts';
import { signWebhook } from './sign.ts';
import { verifyWebhook, WebhookVerificationError } from './verify.ts';

const body = JSON.stringify({ id: 'evt_req-1', type: 'execution.confirmed', version: 1, data: { request_id: 'req-1', note: 'ü 😀' } });
const now = () => Math.floor(Date.now() / 1000);
const codeOf = (fn: () => unknown): string => {
  try {
    fn();
  } catch (e) {
    return (e as { code: string }).code;
  }
  return 'no error';
};

describe('webhook signing secrets', () => {
  it('are whsec_ + base64 of 32 random bytes, each one new', () => {
    const a = generateWebhookSecret();
    expect(a).toMatch(/^whsec_[A-Za-z0-9+/]{43}=$/);
    expect(webhookSigningKey(a)).toHaveLength(32);
    expect(generateWebhookSecret()).not.toBe(a);
  });

  it('refuses what a lenient decoder would turn into a weak key: no prefix, not base64, fewer than 24 bytes', () => {
    const short = `whsec_${Buffer.alloc(16, 1).toString('base64')}`;
    for (const bad of ['abc', `whsec_${'!'.repeat(44)}`, 'whsec_QQ', short, `whsec_${Buffer.alloc(32).toString('base64url')}_`]) {
      expect(() => webhookSigningKey(bad), bad).toThrow(WebhookSecretError);
    }
  });
});

describe('signWebhook', () => {
  it('signs the Standard Webhooks way, as the standardwebhooks package verifies, and X-Webhook-Signature as a plain HMAC of the body', () => {
    const secret = generateWebhookSecret();
    const headers = signWebhook({ id: 'evt_req-1', timestamp: now(), body }, [secret]);
    expect(new Webhook(secret).verify(body, { ...headers })).toEqual(JSON.parse(body));
    const hmac = createHmac('sha256', webhookSigningKey(secret)).update(body).digest('hex');
    expect(headers['x-webhook-signature']).toBe(`sha256=${hmac}`);
    // The reference implementation computes the same v1 signature.
    expect(headers['webhook-signature']).toBe(new Webhook(secret).sign('evt_req-1', new Date(Number(headers['webhook-timestamp']) * 1000), body));
  });

  it('during a rotation, signs with both secrets: a receiver holding either one verifies', () => {
    const [next, old] = [generateWebhookSecret(), generateWebhookSecret()];
    const headers = signWebhook({ id: 'evt_req-2', timestamp: now(), body }, [next, old]);
    expect(headers['webhook-signature'].split(' ')).toHaveLength(2);
    expect(headers['x-webhook-signature'].split(' ')).toHaveLength(2);
    for (const s of [next, old]) {
      expect(new Webhook(s).verify(body, { ...headers })).toBeTruthy();
      expect(verifyWebhook(s, headers, body).id).toBe('evt_req-1');
    }
    expect(() => new Webhook(generateWebhookSecret()).verify(body, { ...headers })).toThrow(StandardError);
  });
});

describe('verifyWebhook', () => {
  const secret = generateWebhookSecret();
  const signed = (over: { timestamp?: number; id?: string } = {}) =>
    signWebhook({ id: over.id ?? 'evt_req-3', timestamp: over.timestamp ?? now(), body }, [secret]);

  it('accepts what the standardwebhooks package signs, with headers in any case, from Node or fetch', () => {
    const ts = new Date();
    const signature = new Webhook(secret).sign('msg_1', ts, body);
    const headers = { 'Webhook-Id': 'msg_1', 'WEBHOOK-TIMESTAMP': String(Math.floor(ts.getTime() / 1000)), 'webhook-signature': signature };
    expect(verifyWebhook(secret, headers, body).type).toBe('execution.confirmed');
    expect(verifyWebhook(secret, new Headers(headers), Buffer.from(body)).type).toBe('execution.confirmed');
  });

  it('refuses a changed body, another id, a wrong secret, a missing header, and a timestamp outside the tolerance', () => {
    const headers = signed();
    expect(codeOf(() => verifyWebhook(secret, headers, body.replace('req-1', 'req-9')))).toBe('no_matching_signature');
    expect(codeOf(() => verifyWebhook(secret, { ...headers, 'webhook-id': 'evt_other' }, body))).toBe('no_matching_signature');
    expect(codeOf(() => verifyWebhook(generateWebhookSecret(), headers, body))).toBe('no_matching_signature');
    expect(codeOf(() => verifyWebhook(secret, { ...headers, 'webhook-signature': undefined }, body))).toBe('missing_headers');
    expect(codeOf(() => verifyWebhook(secret, signed({ timestamp: now() - 301 }), body))).toBe('timestamp_out_of_tolerance');
    expect(codeOf(() => verifyWebhook(secret, signed({ timestamp: now() + 301 }), body))).toBe('timestamp_out_of_tolerance');
    expect(codeOf(() => verifyWebhook(secret, { ...headers, 'webhook-timestamp': '1e9' }, body))).toBe('invalid_timestamp');
    // A replay: the same delivery, verified later than the tolerance.
    expect(codeOf(() => verifyWebhook(secret, headers, body, { now: () => Date.now() + 600_000 }))).toBe('timestamp_out_of_tolerance');
    expect(() => verifyWebhook(secret, headers, body)).not.toThrow();
    expect(() => verifyWebhook(secret, headers, body.replace('req-1', 'req-9'))).toThrow(WebhookVerificationError);
  });

  it('agrees with the standardwebhooks package on every tampering', () => {
    const headers = signed();
    const cases: [Record<string, string>, string][] = [
      [{ ...headers }, body],
      [{ ...headers }, body + ' '],
      [{ ...headers, 'webhook-id': 'x' }, body],
      [{ ...headers, 'webhook-signature': headers['webhook-signature'].replace('v1,', 'v2,') }, body],
      [{ ...headers, 'webhook-timestamp': String(now() - 1000) }, body],
    ];
    for (const [h, b] of cases) {
      const ours = codeOf(() => verifyWebhook(secret, h, b)) === 'no error';
      const theirs = codeOf(() => new Webhook(secret).verify(b, h)) === 'no error';
      expect(ours, JSON.stringify(h)).toBe(theirs);
    }
  });
});
