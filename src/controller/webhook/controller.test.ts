import { createHmac } from 'node:crypto';
import { writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { Webhook } from 'standardwebhooks';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { startWebhookReceiver, type WebhookReceiver } from '../../../test/support/webhookReceiver.ts';
import type { ExecutionRequest, WebhookDelivery } from '../../api/v1alpha1/index.ts';
import { rotateWebhookSecret } from '../../keys/manage.ts';
import { parseExposition } from '../../metrics/testing/exposition.ts';
import { buildWebhookEvent, WebhookEventSchema } from '../../webhooks/event.ts';
import { webhookSigningKey } from '../../webhooks/secret.ts';
import { realSleep, startWebhookHarness, type WebhookHarness } from '../../../test/support/webhookHarness.ts';

let h: WebhookHarness;
let receiver: WebhookReceiver;
const receivers: WebhookReceiver[] = [];
const newReceiver = async (...args: Parameters<typeof startWebhookReceiver>) => {
  const r = await startWebhookReceiver(...args);
  receivers.push(r);
  return r;
};

beforeEach(async () => {
  receiver = await newReceiver();
  h = await startWebhookHarness({ transport: { ca: receiver.ca, allowLoopback: true } });
});
afterEach(async () => {
  await h.close();
  await Promise.all(receivers.splice(0).map((r) => r.close()));
});

const delivered = (r: ExecutionRequest) => r.status?.webhookEvents?.[0]?.state === 'Delivered';
const sampleValue = async (name: string, labels?: Record<string, string>) => parseExposition(await h.metrics.scrape()).value(name, labels) ?? 0;

/** Checks a delivery's signatures as a receiver would: the standardwebhooks package, and a plain HMAC of the body. */
function expectSigned(d: { headers: Record<string, unknown>; body: string }, secret: string): void {
  const headers = Object.fromEntries(Object.entries(d.headers).map(([k, v]) => [k, String(v)]));
  expect(new Webhook(secret).verify(d.body, headers)).toEqual(JSON.parse(d.body));
  const hmac = createHmac('sha256', webhookSigningKey(secret)).update(d.body).digest('hex');
  expect(headers['x-webhook-signature']!.split(' ')).toContain(`sha256=${hmac}`);
}

describe('webhook controller', () => {
  it('sends one signed event per terminal state, with the status record, agent, strategy, wallet and failure', async () => {
    const client = await h.client();
    await h.start();
    const confirmed = await h.finished(client.id, `${receiver.origin}/hooks?k=1`, 'Confirmed');
    const reverted = await h.finished(client.id, `${receiver.origin}/hooks`, 'Reverted');
    const failed = await h.finished(client.id, `${receiver.origin}/hooks`, 'Failed');
    await h.finished(client.id, undefined, 'Confirmed'); // no callback_url: nothing to send
    const pending = await h.store.create({ ...(await h.get(confirmed.metadata.name)), metadata: { name: 'req-not-finished', namespace: 'default' }, status: undefined });

    for (const r of [confirmed, reverted, failed]) await h.until(r.metadata.name, delivered, 'Delivered');
    expect(receiver.received).toHaveLength(3);
    const events = receiver.received.map((d) => WebhookEventSchema.parse(JSON.parse(d.body)));
    expect(events.map((e) => [e.type, e.data.request_id]).sort()).toEqual(
      [
        ['execution.confirmed', confirmed.metadata.name],
        ['execution.failed', failed.metadata.name],
        ['execution.reverted', reverted.metadata.name],
      ].sort(),
    );
    for (const d of receiver.received) expectSigned(d, client.secret!);
    const failedEvent = events.find((e) => e.type === 'execution.failed')!;
    expect(failedEvent.data).toMatchObject({
      status: 'failed',
      agent_id: 'agent-1',
      strategy_id: 'strategy-7',
      smart_wallet_address: `0x${'ab'.repeat(20)}`,
      failure: { code: 'validation_failed', message: 'AA23 reverted', revert_reason: 'nope' },
    });
    const byId = events.find((e) => e.data.request_id === confirmed.metadata.name)!;
    expect(receiver.received.find((d) => d.body.includes(confirmed.metadata.name))!.headers['webhook-id']).toBe(byId.id);
    expect(byId).toMatchObject({ version: 1, timestamp: confirmed.status!.completionTime, data: { tx_hash: `0x${'cd'.repeat(32)}` } });

    const state = (await h.get(confirmed.metadata.name)).status!.webhookEvents![0]!;
    expect(state).toMatchObject({ id: `evt_${confirmed.metadata.name}`, event: 'execution.confirmed', state: 'Delivered', attempts: 1, lastResponseCode: 200 });
    expect(state.deliveredTime).toBeDefined();
    expect((await h.get(pending.metadata.name)).status?.webhookEvents).toBeUndefined();
    expect(await sampleValue('agentwallet_webhook_attempts_total', { result: 'delivered' })).toBe(3);
    expect(await sampleValue('agentwallet_webhook_deliveries_total', { result: 'delivered' })).toBe(3);
    expect(await sampleValue('agentwallet_webhook_delivery_latency_seconds_count')).toBe(3);
    for (const s of ['pending', 'sending', 'retrying']) expect(await sampleValue('agentwallet_webhook_backlog', { state: s })).toBe(0);
  });

  it('a receiver that fails 30 % of the time gets every event; retries carry the same webhook-id and body, each signed anew', async () => {
    const client = await h.client();
    // A fixed pattern: 3 of every 10 deliveries fail, as 503, 500 or 502.
    receiver.respond = (_d, n) => ((n * 7) % 10 < 3 ? { status: [503, 500, 502][n % 3]! } : { status: 200 });
    await h.start({ retryScheduleSeconds: Array(8).fill(0.02) });
    const requests = await Promise.all(Array.from({ length: 20 }, () => h.finished(client.id, `${receiver.origin}/flaky`)));
    for (const r of requests) await h.until(r.metadata.name, delivered, 'Delivered');

    const byId = new Map<string, typeof receiver.received>();
    for (const d of receiver.received) {
      expectSigned(d, client.secret!);
      const id = String(d.headers['webhook-id']);
      byId.set(id, [...(byId.get(id) ?? []), d]);
    }
    expect(byId.size).toBe(20);
    expect(receiver.received.length).toBeGreaterThan(20); // some were retried
    for (const [id, attempts] of byId) {
      expect(new Set(attempts.map((a) => a.body)).size, id).toBe(1); // the same bytes every time
      expect(JSON.parse(attempts[0]!.body).id).toBe(id);
    }
    for (const r of requests) {
      const w = (await h.get(r.metadata.name)).status!.webhookEvents![0]!;
      expect(w.attempts).toBe(byId.get(w.id)!.length);
    }
    const failures = await sampleValue('agentwallet_webhook_failures_total', { cause: 'server_error' });
    expect(failures).toBe(receiver.received.length - 20);
  });

  it('answers 429 with Retry-After: the next attempt is not sent before it', async () => {
    const client = await h.client();
    receiver.respond = (_d, n) => (n === 0 ? { status: 429, headers: { 'retry-after': '1' } } : { status: 200 });
    await h.start({ retryScheduleSeconds: [0.02, 0.02] });
    const r = await h.finished(client.id, `${receiver.origin}/throttled`);
    const retrying = await h.until(r.metadata.name, (x) => x.status?.webhookEvents?.[0]?.state === 'Retrying', 'Retrying');
    const w = retrying.status!.webhookEvents![0]!;
    expect(w.lastFailure).toEqual({ cause: 'throttled', message: 'HTTP 429' });
    expect(w.lastResponseCode).toBe(429);
    expect(Date.parse(w.nextAttemptTime!) - Date.parse(w.lastAttemptTime!)).toBeGreaterThanOrEqual(1_000);
    await h.until(r.metadata.name, delivered, 'Delivered');
    expect(receiver.received).toHaveLength(2);
    expect(receiver.received[1]!.at - receiver.received[0]!.at).toBeGreaterThanOrEqual(1_000 - 50); // clock granularity
    expect(await sampleValue('agentwallet_webhook_failures_total', { cause: 'throttled' })).toBe(1);
  });

  it('answers 410: stops at once and marks the delivery Gone, never tried again', async () => {
    const client = await h.client();
    receiver.respond = () => ({ status: 410 });
    await h.start({ retryScheduleSeconds: [0.01, 0.01, 0.01] });
    const r = await h.finished(client.id, `${receiver.origin}/gone`);
    const gone = await h.until(r.metadata.name, (x) => x.status?.webhookEvents?.[0]?.state === 'Gone', 'Gone');
    expect(gone.status!.webhookEvents![0]).toMatchObject({ attempts: 1, lastResponseCode: 410, lastFailure: { cause: 'gone' } });
    expect(gone.status!.webhookEvents![0]!.nextAttemptTime).toBeUndefined();
    await realSleep(200); // far past every step of the schedule
    expect(receiver.received).toHaveLength(1);
    expect(await sampleValue('agentwallet_webhook_deliveries_total', { result: 'gone' })).toBe(1);
  });

  it('a receiver that hangs past the attempt timeout: that attempt fails as a timeout, the next one delivers', async () => {
    const client = await h.client();
    receiver.respond = (_d, n) => (n === 0 ? 'hang' : { status: 204 });
    await h.start({ transport: { timeoutMs: 300 }, retryScheduleSeconds: [0.02, 0.02] });
    const r = await h.finished(client.id, `${receiver.origin}/slow`);
    const retrying = await h.until(r.metadata.name, (x) => x.status?.webhookEvents?.[0]?.state === 'Retrying', 'Retrying');
    expect(retrying.status!.webhookEvents![0]!.lastFailure).toMatchObject({ cause: 'timeout' });
    const done = await h.until(r.metadata.name, delivered, 'Delivered');
    expect(done.status!.webhookEvents![0]).toMatchObject({ attempts: 2, lastResponseCode: 204 });
    expect(done.status!.webhookEvents![0]!.lastFailure).toBeUndefined();
    expect(new Set(receiver.received.map((d) => d.headers['webhook-id'])).size).toBe(1);
  });

  it('gives up after the last attempt of the schedule, and says so', async () => {
    const client = await h.client();
    receiver.respond = () => ({ status: 500 });
    await h.start({ retryScheduleSeconds: [0.01, 0.01] });
    const r = await h.finished(client.id, `${receiver.origin}/down`);
    const abandoned = await h.until(r.metadata.name, (x) => x.status?.webhookEvents?.[0]?.state === 'Abandoned', 'Abandoned');
    expect(abandoned.status!.webhookEvents![0]).toMatchObject({ attempts: 3, lastResponseCode: 500, lastFailure: { cause: 'server_error' } });
    expect(receiver.received).toHaveLength(3);
    expect(await sampleValue('agentwallet_webhook_deliveries_total', { result: 'abandoned' })).toBe(1);
  });

  it('never connects to a refused address, even one the receiver listens on: a name resolved inside, or a private IP literal', async () => {
    const client = await h.client();
    // The resolver seam answers the receiver's own address (loopback), and loopback is not allowed here.
    await h.start({ transport: { allowLoopback: false, resolver: async () => [{ address: '127.0.0.1', family: 4 }] }, retryScheduleSeconds: [0.01] });
    const byName = await h.finished(client.id, `https://hooks.test:${receiver.port}/x`);
    const byLiteral = await h.finished(client.id, `${receiver.origin}/x`);
    const mapped = await h.finished(client.id, `https://[::ffff:127.0.0.1]:${receiver.port}/x`);
    for (const r of [byName, byLiteral, mapped]) {
      const done = await h.until(r.metadata.name, (x) => x.status?.webhookEvents?.[0]?.state === 'Abandoned', 'Abandoned');
      expect(done.status!.webhookEvents![0]!.lastFailure).toMatchObject({ cause: 'blocked_address' });
      expect(done.status!.webhookEvents![0]!.lastFailure!.message).not.toContain('127.0.0.1:');
    }
    expect(receiver.received).toHaveLength(0);
    expect(await sampleValue('agentwallet_webhook_failures_total', { cause: 'blocked_address' })).toBe(6);
  });

  it('without a signing secret, retries until an operator creates one, then delivers signed with it', async () => {
    const client = await h.client(false);
    await h.start({ retryScheduleSeconds: [0.05, 0.2, 0.2, 0.2, 5] });
    const r = await h.finished(client.id, `${receiver.origin}/x`);
    const waiting = await h.until(r.metadata.name, (x) => x.status?.webhookEvents?.[0]?.lastFailure?.cause === 'no_secret', 'no_secret');
    expect(waiting.status!.webhookEvents![0]!.state).toBe('Retrying');
    expect(receiver.received).toHaveLength(0);
    // Counted from the informer's cache, which may trail the store by a moment.
    for (let i = 0; (await sampleValue('agentwallet_webhook_backlog', { state: 'retrying' })) !== 1; i++) {
      if (i > 200) throw new Error('agentwallet_webhook_backlog{state="retrying"} never reached 1');
      await realSleep(10);
    }
    const { webhook_secret } = await rotateWebhookSecret(h.store, h.secrets, client.id);
    await h.until(r.metadata.name, delivered, 'Delivered', 10_000);
    expect(receiver.received).toHaveLength(1);
    expectSigned(receiver.received[0]!, webhook_secret);
  });

  it('a stored secret that cannot be used fails the attempt (secret_unavailable) and is retried, never sent unsigned', async () => {
    const client = await h.client();
    const ref = (await h.store.get('ApiClient', client.id)).spec.webhookSigning!.current.secretRef;
    writeFileSync(join(h.secretsDir, ref), 'whsec_QQ=='); // a 1-byte key: refused, not used
    await h.start({ retryScheduleSeconds: [0.01, 0.01] });
    const r = await h.finished(client.id, `${receiver.origin}/x`);
    const done = await h.until(r.metadata.name, (x) => x.status?.webhookEvents?.[0]?.state === 'Abandoned', 'Abandoned');
    expect(done.status!.webhookEvents![0]).toMatchObject({ attempts: 3, lastFailure: { cause: 'secret_unavailable' } });
    expect(done.status!.webhookEvents![0]!.lastFailure!.message).toMatch(/key bytes/);
    expect(receiver.received).toHaveLength(0);
  });

  it('after a rotation both secrets sign during the overlap; with no overlap the new one alone', async () => {
    const client = await h.client();
    await h.start();
    const rotated = await rotateWebhookSecret(h.store, h.secrets, client.id, { overlapSeconds: 3600 });
    expect(rotated.key.webhook_previous_secret_valid_until).toBeDefined();
    const during = await h.finished(client.id, `${receiver.origin}/x`);
    await h.until(during.metadata.name, delivered);
    const d1 = receiver.received[0]!;
    expect(String(d1.headers['webhook-signature']).split(' ')).toHaveLength(2);
    expectSigned(d1, client.secret!);
    expectSigned(d1, rotated.webhook_secret);

    const again = await rotateWebhookSecret(h.store, h.secrets, client.id, { overlapSeconds: 0 });
    const after = await h.finished(client.id, `${receiver.origin}/x`);
    await h.until(after.metadata.name, delivered);
    const d2 = receiver.received[1]!;
    expect(String(d2.headers['webhook-signature']).split(' ')).toHaveLength(1);
    expectSigned(d2, again.webhook_secret);
    expect(() => new Webhook(rotated.webhook_secret).verify(d2.body, Object.fromEntries(Object.entries(d2.headers).map(([k, v]) => [k, String(v)])))).toThrow();
  });

  it('bounds attempts in flight per endpoint, and one slow endpoint does not hold back another', async () => {
    const client = await h.client();
    const slow = await newReceiver({ respond: () => ({ status: 200, delayMs: 150 }) });
    const fast = await newReceiver({ respond: () => ({ status: 200, delayMs: 20 }) });
    await h.start({ transport: { ca: slow.ca }, maxConcurrency: 6, maxConcurrencyPerEndpoint: 2 });
    const slowOnes = await Promise.all(Array.from({ length: 12 }, () => h.finished(client.id, `${slow.origin}/s`)));
    const fastOnes = await Promise.all(Array.from({ length: 6 }, () => h.finished(client.id, `${fast.origin}/f`)));
    for (const r of fastOnes) await h.until(r.metadata.name, delivered);
    // The fast endpoint was served while the slow one still had deliveries waiting for its two slots.
    expect(slow.received.length).toBeLessThan(12);
    for (const r of slowOnes) await h.until(r.metadata.name, delivered);
    expect(slow.maxInFlight).toBe(2);
    expect(fast.maxInFlight).toBeLessThanOrEqual(2);
  });

  it('one API client naming many endpoints has at most maxConcurrencyPerClient attempts in flight; another client is served meanwhile', async () => {
    const mallory = await h.client();
    const alice = await h.client();
    let letGo!: () => void;
    const held = new Promise<void>((resolve) => (letGo = resolve));
    // Mallory's receivers on three ports answer only when the test lets them go; each would take two attempts.
    let arrived = 0;
    let mostInFlight = 0;
    const ports: WebhookReceiver[] = [];
    for (let i = 0; i < 3; i++) {
      ports.push(
        await newReceiver({
          respond: () => ({ status: 200, after: held }),
          onDelivery: () => {
            arrived++;
            mostInFlight = Math.max(mostInFlight, ports.reduce((n, p) => n + p.inFlight, 0));
          },
        }),
      );
    }
    await h.start({ transport: { timeoutMs: 60_000 }, maxConcurrency: 6, maxConcurrencyPerEndpoint: 4, maxConcurrencyPerClient: 2 });
    const mallorys = await Promise.all(ports.flatMap((p) => [1, 2].map(() => h.finished(mallory.id, `${p.origin}/m`))));
    for (let i = 0; arrived < 2; i++) {
      if (i > 2_000) throw new Error(`mallory's attempts never reached 2 (${arrived})`);
      await realSleep(5);
    }

    let arrivedWhenAliceLanded: number | undefined;
    const other = await newReceiver({ onDelivery: () => (arrivedWhenAliceLanded = arrived) });
    const alices = await h.finished(alice.id, `${other.origin}/a`);
    for (let i = 0; arrivedWhenAliceLanded === undefined && arrived <= 2; i++) {
      if (i > 4_000) throw new Error("neither alice's delivery nor a third attempt of mallory arrived");
      await realSleep(5);
    }
    // Alice's delivery landed while mallory's two attempts still hung, and mallory had no third one in flight.
    expect(arrivedWhenAliceLanded).toBe(2);
    expect(ports.reduce((n, p) => n + p.inFlight, 0)).toBe(2);
    await h.until(alices.metadata.name, delivered, 'Delivered');

    letGo(); // the parked deliveries are handed back as mallory's attempts end
    for (const r of mallorys) await h.until(r.metadata.name, delivered, 'Delivered');
    expect(arrived).toBe(6);
    expect(mostInFlight).toBe(2);
  });

  it('stop() cuts an attempt in flight and leaves it claimed; the next leader sends it again with the same webhook-id', async () => {
    const client = await h.client();
    receiver.respond = (_d, n) => (n === 0 ? 'hang' : { status: 200 });
    await h.start();
    const r = await h.finished(client.id, `${receiver.origin}/x`);
    await receiver.waitFor(1);
    await h.stopController();
    const claimed = await h.get(r.metadata.name);
    expect(claimed.status!.webhookEvents![0]).toMatchObject({ state: 'Sending', attempts: 1 });
    await h.start();
    const done = await h.until(r.metadata.name, delivered, 'Delivered');
    expect(done.status!.webhookEvents![0]!.attempts).toBe(2);
    expect(receiver.received.map((d) => d.headers['webhook-id'])).toEqual([`evt_${r.metadata.name}`, `evt_${r.metadata.name}`]);
    expect(await sampleValue('agentwallet_webhook_failures_total', { cause: 'interrupted' })).toBe(1);
  });

  it("several events of one request: delivered in order, each with its own id; the next waits until the one ahead is final, even one recorded while it was in flight", async () => {
    const client = await h.client();
    let letGo!: () => void;
    const held = new Promise<void>((resolve) => (letGo = resolve));
    // The first attempt of the first event is held, then answered 503; everything after delivers at once.
    receiver.respond = (_d, n) => (n === 0 ? { status: 503, after: held } : { status: 200 });
    await h.start({ retryScheduleSeconds: [0.02, 0.02] });
    const r = await h.finished(client.id, `${receiver.origin}/events`, 'Broadcasting', { completionTime: undefined, txHash: undefined });
    const t1 = new Date().toISOString();
    await h.transition(r.metadata.name, (s) => ({ ...s, phase: 'Confirmed', txHash: `0x${'cd'.repeat(32)}`, blockNumber: '42', completionTime: t1 }));
    await receiver.waitFor(1);

    // While the first event's attempt is in flight, the inclusion is lost and the request confirmed again.
    await h.transition(r.metadata.name, (s) => ({ ...s, phase: 'Broadcasting', txHash: undefined, blockNumber: undefined, completionTime: undefined }));
    await h.transition(r.metadata.name, (s) => ({ ...s, phase: 'Confirmed', txHash: `0x${'ef'.repeat(32)}`, blockNumber: '43', completionTime: new Date().toISOString() }));
    expect((await h.get(r.metadata.name)).status!.webhookEvents!.map((e) => [e.event, e.state])).toEqual([
      ['execution.confirmed', 'Sending'],
      ['execution.inclusion_lost', undefined],
      ['execution.confirmed', undefined],
    ]);
    expect(receiver.received).toHaveLength(1); // the second waits for the first
    letGo();
    const done = await h.until(r.metadata.name, (x) => x.status?.webhookEvents?.length === 3 && x.status.webhookEvents.every((e) => e.state === 'Delivered'), 'all Delivered');

    const name = r.metadata.name;
    const ids = [`evt_${name}`, `evt_${name}_2`, `evt_${name}_3`];
    expect(done.status!.webhookEvents!.map((e) => [e.id, e.attempts])).toEqual([[ids[0], 2], [ids[1], 1], [ids[2], 1]]);
    expect(receiver.received.map((d) => d.headers['webhook-id'])).toEqual([ids[0], ids[0], ids[1], ids[2]]);
    expect(receiver.received[0]!.body).toBe(receiver.received[1]!.body); // a retry sends the same bytes
    const events = receiver.received.slice(1).map((d) => WebhookEventSchema.parse(JSON.parse(d.body)));
    expect(events.map((e) => [e.id, e.type, e.data.status, e.data.tx_hash])).toEqual([
      [ids[0], 'execution.confirmed', 'confirmed', `0x${'cd'.repeat(32)}`],
      [ids[1], 'execution.inclusion_lost', 'broadcasting', null],
      [ids[2], 'execution.confirmed', 'confirmed', `0x${'ef'.repeat(32)}`],
    ]);
    expect(events[0]!.timestamp).toBe(t1);
    for (const d of receiver.received) expectSigned(d, client.secret!);
    expect(await sampleValue('agentwallet_webhook_deliveries_total', { result: 'delivered' })).toBe(3);
  });

  it('a request stored before events were a list (status.webhook) still finishes: its delivery carries on with the same id and body, as a list of one', async () => {
    const client = await h.client();
    const at = new Date(Date.now() - 60_000).toISOString();
    // Written in the old shape while no controller runs: one waiting for its third attempt, one cut mid-attempt.
    const oldShape = async (phase: 'Confirmed' | 'Failed', webhook: Omit<WebhookDelivery, 'id' | 'event'>) => {
      const r = await h.finished(client.id, `${receiver.origin}/old`, phase);
      const event = phase === 'Confirmed' ? 'execution.confirmed' : 'execution.failed';
      return h.store.updateStatus({ ...r, status: { ...r.status, webhook: { id: `evt_${r.metadata.name}`, event, ...webhook } } });
    };
    const retrying = await oldShape('Confirmed', {
      state: 'Retrying', attempts: 2, firstAttemptTime: at, lastAttemptTime: at, nextAttemptTime: at, lastResponseCode: 503, lastFailure: { cause: 'server_error', message: 'HTTP 503' },
    });
    const sending = await oldShape('Failed', { state: 'Sending', attempts: 1, firstAttemptTime: at, lastAttemptTime: at });
    await h.start({ retryScheduleSeconds: [0.02, 0.02, 0.02] });
    // What the service sent before the upgrade: the event built from the request's terminal state.
    const before = new Map([retrying, sending].map((r) => [`evt_${r.metadata.name}`, buildWebhookEvent(r).body]));

    for (const r of [retrying, sending]) {
      const done = await h.until(r.metadata.name, delivered, 'Delivered');
      expect(done.status!.webhook).toBeUndefined();
      expect(done.status!.webhookEvents).toHaveLength(1);
      expect(done.status!.webhookEvents![0]).toMatchObject({ id: `evt_${r.metadata.name}`, state: 'Delivered', firstAttemptTime: at });
    }
    expect((await h.get(retrying.metadata.name)).status!.webhookEvents![0]!.attempts).toBe(3);
    expect((await h.get(sending.metadata.name)).status!.webhookEvents![0]!.attempts).toBe(2);
    expect(receiver.received).toHaveLength(2);
    for (const d of receiver.received) expect(d.body).toBe(before.get(String(d.headers['webhook-id'])));
    expect(await sampleValue('agentwallet_webhook_failures_total', { cause: 'interrupted' })).toBe(1);
  });
});
