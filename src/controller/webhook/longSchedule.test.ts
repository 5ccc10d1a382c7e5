/**
 * The default retry schedule (≈ 75 h) on a fake clock: setTimeout and Date are faked, so the work queue's
 * requeue-after timers and every timestamp move with the test, while the store, the HTTPS receiver and the
 * sockets run on real I/O. The receiver verifies each delivery with the standardwebhooks package as it
 * arrives, at the fake "now" (Date is faked too, so its ±5 min tolerance holds 75 hours later).
 */
import { Webhook } from 'standardwebhooks';
import { afterEach, expect, it, vi } from 'vitest';
import { startWebhookReceiver, type WebhookReceiver } from '../../../test/support/webhookReceiver.ts';
import { DEFAULT_RETRY_SCHEDULE_SECONDS } from '../../webhooks/schedule.ts';
import { startWebhookHarness, type WebhookHarness } from '../../../test/support/webhookHarness.ts';

let h: WebhookHarness | undefined;
let receiver: WebhookReceiver | undefined;
afterEach(async () => {
  vi.useRealTimers();
  await h?.close();
  await receiver?.close();
});

it('retries a failing endpoint for more than 72 hours: ten attempts, same webhook-id, each signed with its own timestamp, then Abandoned', async () => {
  let secret = '';
  const verdicts: boolean[] = [];
  receiver = await startWebhookReceiver({
    respond: (d) => {
      const headers = Object.fromEntries(Object.entries(d.headers).map(([k, v]) => [k, String(v)]));
      try {
        new Webhook(secret).verify(d.body, headers);
        verdicts.push(true);
      } catch {
        verdicts.push(false);
      }
      return { status: 503 };
    },
  });
  h = await startWebhookHarness({ transport: { ca: receiver.ca, allowLoopback: true } });
  const client = await h.client();
  secret = client.secret!;
  await h.start({ retryScheduleSeconds: [...DEFAULT_RETRY_SCHEDULE_SECONDS] });

  vi.useFakeTimers({ toFake: ['setTimeout', 'clearTimeout', 'Date'], now: Date.now() });
  const r = await h.finished(client.id, `${receiver.origin}/down-for-the-weekend`);
  const start = Date.now();
  const attempts = DEFAULT_RETRY_SCHEDULE_SECONDS.length + 1;
  for (let n = 1; n <= attempts; n++) {
    const current = await h.until(r.metadata.name, (x) => x.status?.webhookEvents?.[0]?.attempts === n && x.status.webhookEvents![0]!.state !== 'Sending', `attempt ${n} recorded`);
    const w = current.status!.webhookEvents![0]!;
    if (n === attempts) {
      expect(w.state).toBe('Abandoned');
      break;
    }
    expect(w.state).toBe('Retrying');
    const wait = Date.parse(w.nextAttemptTime!) - Date.now();
    const step = DEFAULT_RETRY_SCHEDULE_SECONDS[n - 1]! * 1000;
    expect(wait).toBeGreaterThanOrEqual(step - 5); // ms rounding of the ISO time
    expect(wait).toBeLessThanOrEqual(step * 1.1 + 5);
    await vi.advanceTimersByTimeAsync(wait);
  }

  expect(receiver.received).toHaveLength(attempts);
  expect(verdicts).toEqual(Array(attempts).fill(true));
  expect(new Set(receiver.received.map((d) => d.headers['webhook-id']))).toEqual(new Set([`evt_${r.metadata.name}`]));
  const stamps = receiver.received.map((d) => Number(d.headers['webhook-timestamp']));
  for (let i = 1; i < stamps.length; i++) expect(stamps[i]).toBeGreaterThan(stamps[i - 1]!);
  expect(stamps.at(-1)! - stamps[0]!).toBeGreaterThanOrEqual(72 * 3600);
  expect(Date.now() - start).toBeGreaterThanOrEqual(72 * 3600 * 1000); // fake time: the schedule's span, not the test's
}, 120_000);
