import { request as httpRequest } from 'node:http';
import type { AddressInfo } from 'node:net';
import { afterAll, beforeAll, describe, expect, it, vi } from 'vitest';
import { executionRequest, openTestGateway, writeStatus, type TestGateway } from './testing/harness.ts';
import { createWaitSlots } from './waitSlots.ts';

/** GET /status/:id with a wait (long poll): docs/api.md "Waiting for a change". */
describe('GET /status/:id?wait=N', () => {
  const slots = createWaitSlots(2);
  let gw: TestGateway;
  let alice: { apiKey: string; clientId: string };
  let bob: { apiKey: string; clientId: string };
  beforeAll(async () => {
    gw = await openTestGateway({ statusWaits: slots });
    alice = await gw.newKey();
    bob = await gw.newKey();
  });
  afterAll(() => gw.close());

  const get = (url: string, headers: Record<string, string> = {}, key = alice.apiKey) =>
    gw.app.inject({ url, headers: { 'x-api-key': key, ...headers } });
  let n = 0;
  const newRequest = async () => {
    const name = `req-wait-${++n}`;
    await gw.store.create(executionRequest(name, alice.clientId));
    return name;
  };
  /** Resolves once `count` waits of alice's key are open in the gateway: what follows happens during them. */
  const waitsOpen = (count: number) => vi.waitFor(() => expect(slots.open(alice.clientId)).toBe(count), { timeout: 5_000, interval: 5 });

  it('the plain GET carries an ETag that changes with the record and only with it', async () => {
    const id = await newRequest();
    const first = await get(`/status/${id}`);
    expect(first.statusCode).toBe(200);
    expect(first.headers.etag).toMatch(/^"[A-Za-z0-9_-]{27}"$/);
    expect((await get(`/status/${id}`)).headers.etag).toBe(first.headers.etag);
    expect(first.headers['preference-applied']).toBeUndefined();
    // A write the record does not show (bookkeeping) keeps the ETag; a transition changes it.
    await writeStatus(gw.store, id, (s) => ({ ...s, submitAttempts: 1 }));
    expect((await get(`/status/${id}`)).headers.etag).toBe(first.headers.etag);
    await writeStatus(gw.store, id, (s) => ({ ...s, phase: 'Queued', queuedTime: '2030-01-01T00:00:01Z' }));
    const queued = await get(`/status/${id}`);
    expect(queued.json().status).toBe('queued');
    expect(queued.headers.etag).not.toBe(first.headers.etag);
  });

  it('answers at once when the status already differs from known_status', async () => {
    const id = await newRequest();
    await writeStatus(gw.store, id, (s) => ({ ...s, phase: 'Queued' }));
    const res = await get(`/status/${id}?wait=30&known_status=pending`);
    expect(res.statusCode).toBe(200);
    expect(res.json()).toMatchObject({ request_id: id, status: 'queued' });
    expect(res.headers['preference-applied']).toBe('wait=30');
    expect(res.headers.etag).toBe((await get(`/status/${id}`)).headers.etag);
    expect(slots.open(alice.clientId)).toBe(0);
  });

  it('answers at once on a terminal status, even the one the caller knows', async () => {
    const id = await newRequest();
    await writeStatus(gw.store, id, (s) => ({ ...s, phase: 'Confirmed', txHash: `0x${'ab'.repeat(32)}` }));
    const res = await get(`/status/${id}?known_status=confirmed`, { prefer: 'wait=30' });
    expect(res.json()).toMatchObject({ status: 'confirmed', tx_hash: `0x${'ab'.repeat(32)}` });
    expect(res.headers['preference-applied']).toBe('wait=30');
  });

  it('waits, and answers with the new record when the status changes', async () => {
    const id = await newRequest();
    const pending = get(`/status/${id}?wait=30&known_status=pending`);
    await waitsOpen(1);
    // A write the record shows that leaves the status as it was: known_status=pending still holds, no answer.
    await writeStatus(gw.store, id, (s) => ({ ...s, smartWalletAddress: `0x${'ab'.repeat(20)}` }));
    await writeStatus(gw.store, id, (s) => ({ ...s, phase: 'Queued' }));
    const res = await pending;
    expect(res.statusCode).toBe(200);
    expect(res.json()).toMatchObject({ status: 'queued', smart_wallet_address: `0x${'ab'.repeat(20)}` });
    expect(res.headers.etag).toBe((await get(`/status/${id}`)).headers.etag);
    expect(slots.open(alice.clientId)).toBe(0);
  });

  it('at the end of the wait, answers 200 with the same record and ETag', async () => {
    const id = await newRequest();
    const before = await get(`/status/${id}`);
    const res = await get(`/status/${id}?wait=1`, { 'if-none-match': before.headers.etag as string });
    expect(res.statusCode).toBe(200);
    expect(res.json()).toEqual(before.json());
    expect(res.headers.etag).toBe(before.headers.etag);
    expect(res.headers['preference-applied']).toBe('wait=1');
  });

  it('If-None-Match: waits past writes the record does not show; answers on the next change; a stale ETag answers at once', async () => {
    const id = await newRequest();
    const seen = await get(`/status/${id}`);
    const etag = seen.headers.etag as string;
    const waiting = get(`/status/${id}`, { prefer: 'respond-async, wait=30', 'if-none-match': `W/"other", ${etag}` });
    await waitsOpen(1);
    await writeStatus(gw.store, id, (s) => ({ ...s, submitAttempts: 1 })); // not in the record: the wait goes on
    await writeStatus(gw.store, id, (s) => ({ ...s, smartWalletAddress: `0x${'ef'.repeat(20)}` })); // in the record
    const res = await waiting;
    expect(res.json()).toMatchObject({ status: 'pending', smart_wallet_address: `0x${'ef'.repeat(20)}` });
    expect(res.headers.etag).not.toBe(etag);
    expect(res.headers.etag).toBe((await get(`/status/${id}`)).headers.etag);

    const stale = await get(`/status/${id}?wait=30`, { 'if-none-match': etag });
    expect(stale.json().smart_wallet_address).toBe(`0x${'ef'.repeat(20)}`);
  });

  it('without a known state there is nothing to wait for: the record at once', async () => {
    const id = await newRequest();
    const res = await get(`/status/${id}?wait=30`);
    expect(res.json().status).toBe('pending');
    expect(res.headers['preference-applied']).toBeUndefined();
  });

  it('a blank If-None-Match names no tag: the record differs from all it names, so it comes at once (not a 400)', async () => {
    const id = await newRequest();
    for (const blank of ['', ' ', '\t']) {
      const res = await get(`/status/${id}?wait=30`, { 'if-none-match': blank });
      expect([blank, res.statusCode, res.json().status]).toEqual([blank, 200, 'pending']);
    }
  });

  it('open waits are bounded per API key: over the bound, 429 too_many_waits; other keys are not affected', async () => {
    const a = await newRequest();
    const waits = [get(`/status/${a}?wait=30&known_status=pending`), get(`/status/${a}?wait=30&known_status=pending`)];
    await waitsOpen(2);
    const over = await get(`/status/${a}?wait=30&known_status=pending`);
    expect(over.statusCode).toBe(429);
    expect(over.json()).toMatchObject({ error: 'too_many_waits', retry_after_seconds: 1 });
    expect(over.headers['retry-after']).toBe('1');
    // The plain GET and an answer-at-once are not waits.
    expect((await get(`/status/${a}`)).statusCode).toBe(200);
    expect((await get(`/status/${a}?wait=30&known_status=queued`)).statusCode).toBe(200);
    // Bob's own request, Bob's own bound.
    await gw.store.create(executionRequest('req-wait-bob', bob.clientId));
    const bobs = get('/status/req-wait-bob?wait=30&known_status=pending', {}, bob.apiKey);
    await vi.waitFor(() => expect(slots.open(bob.clientId)).toBe(1), { timeout: 5_000, interval: 5 });
    await writeStatus(gw.store, 'req-wait-bob', (s) => ({ ...s, phase: 'Queued' }));
    expect((await bobs).json().status).toBe('queued');

    await writeStatus(gw.store, a, (s) => ({ ...s, phase: 'Queued' }));
    for (const w of await Promise.all(waits)) expect(w.json().status).toBe('queued');
    expect(slots.open(alice.clientId)).toBe(0);
  });

  it('a client that disconnects frees its slot and its subscription at once', async () => {
    const id = await newRequest();
    await gw.app.listen({ port: 0, host: '127.0.0.1' });
    const { port } = gw.app.server.address() as AddressInfo;
    const open = () => {
      const req = httpRequest({ port, host: '127.0.0.1', path: `/status/${id}?wait=30&known_status=pending`, headers: { 'x-api-key': alice.apiKey } });
      req.on('error', () => undefined); // destroyed below
      req.end();
      return req;
    };
    const reqs = [open(), open()];
    await waitsOpen(2);
    for (const r of reqs) r.destroy();
    await waitsOpen(0);
    // The freed slots are usable again, and the next change reaches the new waits (none answers the gone ones).
    const again = get(`/status/${id}?wait=30&known_status=pending`);
    await waitsOpen(1);
    await writeStatus(gw.store, id, (s) => ({ ...s, phase: 'Queued' }));
    expect((await again).json().status).toBe('queued');
  });

  it("another key's request is 404 with a wait too", async () => {
    const id = await newRequest();
    const res = await get(`/status/${id}?wait=30&known_status=pending`, {}, bob.apiKey);
    expect(res.statusCode).toBe(404);
    expect(res.json()).toEqual({ error: 'not_found', message: expect.any(String) });
    expect(slots.open(bob.clientId)).toBe(0);
  });

  it('a wait over 30 s is taken as 30', async () => {
    const id = await newRequest();
    const res = await get(`/status/${id}?known_status=queued`, { prefer: 'wait=3600' });
    expect(res.statusCode).toBe(200);
    expect(res.headers['preference-applied']).toBe('wait=30');
  });

  it.each([
    ['?wait=abc&known_status=pending', {}, 'invalid_wait', 'wait'],
    ['?wait=-1&known_status=pending', {}, 'invalid_wait', 'wait'],
    ['?wait=1.5&known_status=pending', {}, 'invalid_wait', 'wait'],
    ['?wait=&known_status=pending', {}, 'invalid_wait', 'wait'],
    ['?wait=1&wait=2', {}, 'duplicate_parameter', 'wait'],
    ['?wait=1&known_status=done', {}, 'invalid_known_status', 'known_status'],
    ['?wait=1&known_status=PENDING', {}, 'invalid_known_status', 'known_status'],
    ['', { prefer: 'wait=soon' }, 'invalid_wait', 'Prefer'],
    ['', { prefer: 'wait=-5' }, 'invalid_wait', 'Prefer'],
    ['?wait=1', { 'if-none-match': 'no-quotes' }, 'invalid_if_none_match', 'If-None-Match'],
  ])('400 for %s %o', async (query, headers, code, field) => {
    const res = await get(`/status/req-wait-1${query}`, headers as Record<string, string>);
    expect(res.statusCode, res.body).toBe(400);
    expect(res.json()).toMatchObject({ error: code, field });
  });
});
