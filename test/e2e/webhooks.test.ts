/**
 * Completion webhooks end to end on the embedded service: an execute with a callback_url, through the chain,
 * to a real HTTPS receiver; callback URLs aimed inside refused by POST /execute; and the service killed
 * (kill -9) between attempts and during one: every event is delivered after the restart, duplicates carry
 * the same webhook-id.
 */
import { spawn } from 'node:child_process';
import { readFileSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { createInterface } from 'node:readline';
import { Webhook } from 'standardwebhooks';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { encodeFunctionData } from 'viem';
import { callAdminSocket } from '../../src/admin/socket.ts';
import { counterAbi } from '../../src/devnet/contracts.ts';
import { WebhookEventSchema } from '../../src/webhooks/event.ts';
import type { Resolver } from '../../src/lib/egress/egress.ts';
import { killHard, spawnServiceChild } from '../support/child.ts';
import { newServiceSecret, tempDir, testDevnet } from '../support/env.ts';
import { apiClient } from '../support/http.ts';
import { startTestService, type TestService } from '../support/service.ts';
import { startWebhookReceiver, type ReceivedWebhook, type WebhookReceiver } from '../support/webhookReceiver.ts';
import { until as untilDone } from '../support/until.ts';

const headersOf = (d: ReceivedWebhook) => Object.fromEntries(Object.entries(d.headers).map(([k, v]) => [k, String(v)]));

function executeBody(chain: 'ethereum' | 'base' | 'arbitrum', agent: string, callbackUrl?: string) {
  return {
    agent_id: agent,
    chain,
    target_contract: testDevnet().chain(chain).testContracts.counter,
    calldata: encodeFunctionData({ abi: counterAbi, functionName: 'increment' }),
    value: '0',
    ...(callbackUrl !== undefined && { callback_url: callbackUrl }),
  };
}

const until = <T>(what: string, fn: () => Promise<T | undefined>) => untilDone(what, fn, 60_000, 50);

describe('webhooks on the embedded service', () => {
  let receiver: WebhookReceiver;
  let svc: TestService;
  // The resolver seam: names the tests made up, pointing at chosen addresses.
  const resolver: Resolver = async (host) => {
    const table: Record<string, string> = { 'hooks.test': '127.0.0.1', 'internal.test': '10.1.2.3', 'metadata.test': '169.254.169.254', 'ula.test': 'fd00::1' };
    const address = table[host];
    if (!address) throw Object.assign(new Error(`ENOTFOUND ${host}`), { code: 'ENOTFOUND' });
    return [{ address, family: address.includes(':') ? 6 : 4 }];
  };

  beforeAll(async () => {
    receiver = await startWebhookReceiver();
    svc = await startTestService({ webhooks: { allowLoopback: true, ca: receiver.ca, resolver, retryScheduleSeconds: [0.05, 0.1] } });
  });
  afterAll(async () => {
    await svc?.stop();
    await receiver?.close();
  });

  it('delivers the confirmed event of an execute to its callback_url: the status record, signed, verified by the standard library', async () => {
    const { api, webhookSecret } = await svc.newKey();
    const res = await api.post('/execute', executeBody('base', 'hook-agent', `https://hooks.test:${receiver.port}/agent-wallet?tenant=7`));
    expect(res.status, JSON.stringify(res.body)).toBe(200);
    const status = await api.waitForTerminal(res.body.request_id);
    expect(status.status).toBe('confirmed');
    const [delivery] = await receiver.waitFor(1);
    const event = WebhookEventSchema.parse(new Webhook(webhookSecret).verify(delivery!.body, headersOf(delivery!)));
    expect(event).toMatchObject({ type: 'execution.confirmed', id: `evt_${res.body.request_id}`, version: 1 });
    expect(event.data).toEqual((await api.get(`/status/${res.body.request_id}`)).body); // the status record, exactly
    expect(delivery!.headers['content-type']).toBe('application/json');
    const stored = await until('Delivered', async () => {
      const r = await svc.store.get('ExecutionRequest', res.body.request_id);
      return r.status?.webhookEvents?.[0]?.state === 'Delivered' ? r : undefined;
    });
    expect(stored.status!.webhookEvents![0]).toMatchObject({ attempts: 1, lastResponseCode: 200 });
  });

  it("delivers over plain http:// to docs/webhooks.md's sample receiver on this machine (development setting), which took a free port", async () => {
    const { api, webhookSecret } = await svc.newKey();
    const doc = readFileSync(new URL('../../docs/webhooks.md', import.meta.url), 'utf8');
    const code = /<!-- webhook-receiver:begin -->\n```js\n([\s\S]*?)\n```\n<!-- webhook-receiver:end -->/.exec(doc)?.[1];
    expect(code, 'the receiver block markers').toBeDefined();
    const file = join(tempDir('aw-receiver-'), 'receiver.mjs');
    writeFileSync(file, code!);
    const child = spawn(process.execPath, [file], { env: { PATH: process.env.PATH, WEBHOOK_SECRET: webhookSecret }, stdio: ['ignore', 'pipe', 'inherit'] });
    try {
      const lines = createInterface({ input: child.stdout! })[Symbol.asyncIterator]();
      const callbackUrl = /callback_url (\S+)/.exec((await lines.next()).value as string)![1]!;
      expect(callbackUrl).toMatch(/^http:\/\/127\.0\.0\.1:\d+\/hooks$/);
      expect(new URL(callbackUrl).port).not.toBe('8080');
      const res = await api.post('/execute', executeBody('base', 'plain-http-agent', callbackUrl));
      expect(res.status, JSON.stringify(res.body)).toBe(200);
      const status = await api.waitForTerminal(res.body.request_id);
      // The receiver verified the signature (it answers 401 otherwise) and printed the event.
      expect((await lines.next()).value).toBe(`execution.confirmed ${res.body.request_id} ${status.tx_hash}`);
    } finally {
      child.kill('SIGTERM');
    }
  });

  it.each([
    ['loopback', 'https://127.0.0.1:8443/hook', undefined],
    ['10/8', 'https://10.0.0.1/hook', /private/],
    ['172.16/12', 'https://172.16.0.1/hook', /private/],
    ['192.168/16', 'https://192.168.0.1/hook', /private/],
    ['100.64/10', 'https://100.64.1.1/hook', /carrier-grade NAT/],
    ['the metadata address', 'https://169.254.169.254/latest/meta-data/', /link-local/],
    ['a name resolving to 10/8', 'https://internal.test/hook', /resolves to a private address/],
    ['a name resolving to the metadata address', 'https://metadata.test/hook', /resolves to a link-local address/],
    ['a name resolving to fd00::/8', 'https://ula.test/hook', /resolves to a private address/],
    ['a name that does not resolve', 'https://nowhere.test/hook', /does not resolve/],
  ])('POST /execute refuses a callback_url aimed at %s with 400 (nothing created)', async (_what, url, message) => {
    const { api } = await svc.newKey();
    const before = (await svc.store.list('ExecutionRequest')).items.length;
    const res = await api.post('/execute', executeBody('ethereum', 'ssrf-agent', url));
    if (message === undefined) {
      // Loopback is allowed here only because this service runs with the development setting (allowLoopback).
      expect(res.status).toBe(200);
      return;
    }
    expect(res.status).toBe(400);
    expect(res.body).toMatchObject({ error: 'callback_url_not_allowed', field: 'callback_url' });
    expect(res.body.message).toMatch(message);
    expect((await svc.store.list('ExecutionRequest')).items.length).toBe(before);
  });
});

describe('a loopback callback_url without the development setting', () => {
  let svc: TestService;
  beforeAll(async () => {
    svc = await startTestService();
  });
  afterAll(async () => {
    await svc?.stop();
  });

  it.each(['https://127.0.0.1:8443/hook', 'http://127.0.0.1:8443/hook', 'http://localhost:8443/hook'])(
    'is refused with 400 naming the flag that allows it: %s',
    async (url) => {
      const { api } = await svc.newKey();
      const res = await api.post('/execute', executeBody('ethereum', 'local-agent', url));
      expect(res.status).toBe(400);
      expect(res.body).toMatchObject({ error: 'callback_url_not_allowed', field: 'callback_url' });
      expect(res.body.message).toMatch(/allowed in development only; to try webhooks locally, start the service with --allow-loopback-webhooks$/);
    },
  );

  it('a plain http:// URL anywhere else is not a callback_url at all', async () => {
    const { api } = await svc.newKey();
    const res = await api.post('/execute', executeBody('ethereum', 'local-agent', 'http://example.com/hook'));
    expect(res.status).toBe(400);
    expect(res.body).toMatchObject({ error: 'invalid_callback_url', field: 'callback_url' });
  });
});

describe('receivers that answer their headers and never end the body', () => {
  // Four sockets in all: four trickling receivers would fill the pool, were their sockets held.
  const trickle = { everyMs: 250, bytes: 240 }; // a minute, were it read to the end
  let trickling: WebhookReceiver[] = [];
  let svc: TestService;
  beforeAll(async () => {
    trickling = await Promise.all([0, 1, 2, 3].map(() => startWebhookReceiver({ respond: () => ({ status: 200, trickle }) })));
    svc = await startTestService({ webhooks: { allowLoopback: true, ca: trickling[0]!.ca, maxConcurrency: 4, retryScheduleSeconds: [0.05, 0.1] } });
  });
  afterAll(async () => {
    await svc?.stop();
    await Promise.all(trickling.map((r) => r.close()));
  });

  it("hold nothing: another tenant's delivery lands before any of them has ended its body", async () => {
    const mallory = await svc.newKey();
    for (const [i, r] of trickling.entries()) {
      const res = await mallory.api.post('/execute', executeBody('base', `trickle-${i}`, `${r.origin}/t`));
      expect(res.status, JSON.stringify(res.body)).toBe(200);
    }
    await Promise.all(trickling.map((r) => r.waitFor(1, 60_000)));

    let trickleAnswersWhenItLanded: string[] = [];
    const normal = await startWebhookReceiver({ onDelivery: () => (trickleAnswersWhenItLanded = trickling.map((r) => r.received[0]!.answer)) });
    try {
      const alice = await svc.newKey();
      const res = await alice.api.post('/execute', executeBody('base', 'alice', `${normal.origin}/a`));
      expect(res.status, JSON.stringify(res.body)).toBe(200);
      const [delivery] = await normal.waitFor(1, 90_000);
      new Webhook(alice.webhookSecret).verify(delivery!.body, headersOf(delivery!));
      // No trickling receiver had ended its body (each would have gone on for a minute): the sender read their
      // status and hung up (`cut`). Had it read on, their four sockets would have filled the pool until then.
      expect(trickleAnswersWhenItLanded).toHaveLength(4);
      for (const answer of trickleAnswersWhenItLanded) expect(['sending', 'cut']).toContain(answer);
      for (const r of trickling) expect(r.received.map((d) => d.answer)).toEqual(['cut']);
    } finally {
      await normal.close();
    }
  }, 120_000);
});

describe('webhooks across a kill -9 of the service', () => {
  it('a delivery waiting to retry, and one cut mid-attempt, are both sent after the restart, with their webhook-ids', async () => {
    // Request A: its first attempt fails (503), the retry is due after the kill. Request B: its first attempt
    // hangs (the process dies with it in flight, claimed as Sending).
    const firstAttempt = new Map<string, 'fail' | 'hang'>();
    const receiver = await startWebhookReceiver({
      respond: (d) => {
        const id = String(d.headers['webhook-id']);
        const plan = firstAttempt.get(id);
        if (plan === undefined) return { status: 200 };
        firstAttempt.delete(id);
        return plan === 'hang' ? 'hang' : { status: 503 };
      },
    });
    const dataDir = tempDir('aw-webhook-crash-');
    const secret = newServiceSecret();
    const env = { AGENT_WALLET_TEST_WEBHOOKS: JSON.stringify({ allowLoopback: true, caPath: receiver.caPath, retryScheduleSeconds: [3, 3, 3] }) };
    let child = await spawnServiceChild(dataDir, secret, env);
    try {
      const { api_key, webhook_secret } = (await callAdminSocket(dataDir, 'POST', '/keys', { mode: 'sponsored', requestsPerSecond: 1000, burst: 1000 })) as {
        api_key: string;
        webhook_secret: string;
      };
      let api = apiClient(child.url, api_key);
      const ids: string[] = [];
      for (const [agent, plan] of [['crash-hook-a', 'fail'], ['crash-hook-b', 'hang']] as const) {
        const res = await api.post('/execute', executeBody('arbitrum', agent, `${receiver.origin}/hooks/${agent}`));
        expect(res.status, JSON.stringify(res.body)).toBe(200);
        firstAttempt.set(`evt_${res.body.request_id}`, plan);
        ids.push(res.body.request_id);
      }
      await receiver.waitFor(2, 60_000); // both first attempts arrived: A answered 503, B hangs
      // Let A's 503 be recorded as Retrying. Were the kill to come first, A would be found Sending and sent
      // again at once: two attempts either way, which is what is asserted.
      await new Promise((r) => setTimeout(r, 200));
      await killHard(child.child);

      child = await spawnServiceChild(dataDir, secret, env);
      api = apiClient(child.url, api_key);
      await receiver.waitFor(4, 60_000);
      const byId = new Map<string, ReceivedWebhook[]>();
      for (const d of receiver.received) {
        new Webhook(webhook_secret).verify(d.body, headersOf(d));
        byId.set(String(d.headers['webhook-id']), [...(byId.get(String(d.headers['webhook-id'])) ?? []), d]);
      }
      expect([...byId.keys()].sort()).toEqual(ids.map((id) => `evt_${id}`).sort());
      for (const [, attempts] of byId) expect(attempts).toHaveLength(2); // the first attempt, and the one after the restart
      expect(new Set(byId.get(`evt_${ids[1]}`)!.map((d) => d.body)).size).toBe(1);
      const statuses = await Promise.all(ids.map((id) => api.waitForTerminal(id)));
      expect(statuses.map((s) => s.status)).toEqual(['confirmed', 'confirmed']);
    } finally {
      await killHard(child.child);
      await receiver.close();
    }
  });
});
