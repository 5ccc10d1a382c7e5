/**
 * The HTTPS transport against real receivers (test/support/webhookReceiver.ts) through Node's real https.Agent,
 * with one socket per endpoint so that an attempt can be made to wait for one. Asserted by the order of
 * events, never by elapsed time.
 */
import { createServer } from 'node:http';
import type { AddressInfo } from 'node:net';
import { afterEach, expect, it, vi } from 'vitest';
import { startWebhookReceiver, type ReceivedWebhook, type WebhookReceiver } from '../../test/support/webhookReceiver.ts';
import { createHttpsTransport, type AttemptResult, type WebhookTransport } from './deliver.ts';

const receivers: WebhookReceiver[] = [];
const transports: WebhookTransport[] = [];
afterEach(async () => {
  vi.useRealTimers();
  for (const t of transports.splice(0)) t.close();
  await Promise.all(receivers.splice(0).map((r) => r.close()));
});

async function receiver(...args: Parameters<typeof startWebhookReceiver>): Promise<WebhookReceiver> {
  const r = await startWebhookReceiver(...args);
  receivers.push(r);
  return r;
}

function transport(r: WebhookReceiver, timeoutMs: number): WebhookTransport {
  const t = createHttpsTransport({ ca: r.ca, allowLoopback: true, timeoutMs, maxSocketsPerEndpoint: 1 });
  transports.push(t);
  return t;
}

const attempt = (r: WebhookReceiver, path: string) => ({ url: `${r.origin}/${path}`, body: '{"n":1}', headers: { 'webhook-id': path } });

it('reads the status and Retry-After and hangs up: a receiver that trickles its body forever holds neither the attempt nor the socket', async () => {
  // The first answer trickles a byte every 50 ms for 10 s; the next one is plain.
  const trickle = { everyMs: 50, bytes: 200 };
  let trickling: ReceivedWebhook | undefined;
  const r = await receiver({ respond: (_d, n) => (n === 0 ? { status: 503, headers: { 'retry-after': '7' }, trickle } : { status: 204 }) });
  const t = transport(r, 30_000);

  const first = await t.send(attempt(r, 'trickled'));
  expect(first).toMatchObject({ kind: 'failed', cause: 'server_error', statusCode: 503, retryAfterMs: 7_000 });
  trickling = r.received[0];
  // The endpoint's only socket: the next attempt gets it only once the trickling one is closed.
  const second = await t.send(attempt(r, 'plain'));
  expect(second).toEqual({ kind: 'delivered', statusCode: 204 });
  expect(r.received).toHaveLength(2);
  expect(trickling!.answer).toBe('cut'); // the sender hung up; the receiver never ended that body
  // And says so: no keep-alive is announced for a connection that is closed after each attempt.
  expect(r.received.map((d) => d.headers['connection'])).toEqual(['close', 'close']);
});

it('an attempt still waiting for a socket when its deadline passes ends with timeout, while the socket stays held', async () => {
  const r = await receiver({ respond: () => 'hang' });
  const t = transport(r, 20_000);
  // The first attempt's deadline runs on the real clock (installed before the fake one below), so it cannot
  // end first: it holds the endpoint's only socket throughout.
  let holderSettled = false;
  const holder = t.send(attempt(r, 'holder')).finally(() => (holderSettled = true));
  await r.waitFor(1);

  vi.useFakeTimers({ toFake: ['setTimeout', 'clearTimeout'] });
  let queuedResult: AttemptResult | undefined;
  const queued = t.send(attempt(r, 'queued')).then((x) => (queuedResult = x));
  await vi.advanceTimersByTimeAsync(19_999);
  expect(queuedResult).toBeUndefined();
  await vi.advanceTimersByTimeAsync(1);
  await queued;
  expect(queuedResult).toMatchObject({ kind: 'failed', cause: 'timeout' });
  expect(holderSettled).toBe(false);
  expect(r.inFlight).toBe(1);
  expect(r.received.map((d) => d.headers['webhook-id'])).toEqual(['holder']); // the queued one never got a socket
  vi.useRealTimers();

  t.close(); // cuts the holder
  expect(await holder).toMatchObject({ kind: 'failed' });
});

it('plain http:// goes to a loopback receiver under the development setting only, and to nothing but loopback', async () => {
  const got: string[] = [];
  const server = createServer((req, res) => {
    got.push(req.url ?? '');
    res.writeHead(200).end();
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const { port } = server.address() as AddressInfo;
  const dev = createHttpsTransport({ allowLoopback: true, timeoutMs: 10_000, resolver: async () => [{ address: '127.0.0.1', family: 4 }] });
  const prod = createHttpsTransport({ timeoutMs: 10_000 });
  // `localhost` that a resolver points elsewhere is not connected to over plain HTTP.
  const rebound = createHttpsTransport({ allowLoopback: true, timeoutMs: 10_000, resolver: async () => [{ address: '93.184.216.34', family: 4 }] });
  transports.push(dev, prod, rebound);
  try {
    const body = { body: '{"n":1}', headers: { 'webhook-id': 'plain' } };
    expect(await dev.send({ url: `http://127.0.0.1:${port}/ip`, ...body })).toEqual({ kind: 'delivered', statusCode: 200 });
    expect(await dev.send({ url: `http://localhost:${port}/name`, ...body })).toEqual({ kind: 'delivered', statusCode: 200 });
    expect(await prod.send({ url: `http://127.0.0.1:${port}/prod`, ...body })).toMatchObject({ kind: 'failed', cause: 'blocked_address' });
    expect(await rebound.send({ url: `http://localhost:${port}/rebound`, ...body })).toMatchObject({ kind: 'failed', cause: 'blocked_address' });
    expect(got).toEqual(['/ip', '/name']);
  } finally {
    await new Promise((resolve) => server.close(resolve));
  }
});
