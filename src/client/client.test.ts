import { encodeFunctionData, parseAbi } from 'viem';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startTestService, type TestService } from '../../test/support/service.ts';
import { ApiError, createClient } from './index.ts';

const INCREMENT = encodeFunctionData({ abi: parseAbi(['function increment()']), functionName: 'increment' });

let svc: TestService;
beforeAll(async () => {
  svc = await startTestService();
});
afterAll(async () => {
  await svc?.stop();
});
const call = (agent: string) => ({ agent_id: agent, chain: 'base', target_contract: svc.devnet.chain('base').testContracts.counter, calldata: INCREMENT });

describe('the typed client', () => {
  it('reads, simulates, executes and waits for confirmed; answers are values', async () => {
    const { apiKey } = await svc.newKey('sponsored');
    const client = createClient({ baseUrl: svc.url, apiKey });
    const wallet = await client.wallet('client-1', 'base');
    expect(wallet.ok && wallet.value.deployed).toBe(false);
    const sim = await client.simulate(call('client-1'));
    expect(sim.ok && sim.value.status).toBe('pending');
    const executed = await client.execute(call('client-1'));
    if (!executed.ok) throw executed.error;
    const seen: string[] = [];
    const done = await client.waitForTerminal(executed.value.request_id, { minIntervalMs: 20, maxIntervalMs: 40, onStatus: (s) => seen.push(s.status) });
    expect(done.ok && done.value.status).toBe('confirmed');
    expect(seen.at(-1)).toBe('confirmed');
  });

  it('waitForTerminal follows the request with waiting GETs from the state last seen, never sleeping between polls', async () => {
    const { apiKey } = await svc.newKey('sponsored');
    const gets: string[] = [];
    const counting: typeof fetch = (input, init) => {
      if ((init?.method ?? 'GET') === 'GET') gets.push(String(input));
      return fetch(input, init);
    };
    const client = createClient({ baseUrl: svc.url, apiKey, fetch: counting });
    const executed = await client.execute(call('client-wait'));
    if (!executed.ok) throw executed.error;
    const seen: string[] = [];
    // Polling bounds far past the deadline: a client that slept between polls would end in wait_timeout.
    const done = await client.waitForTerminal(executed.value.request_id, {
      minIntervalMs: 600_000,
      timeoutMs: 120_000,
      onStatus: (s) => seen.push(s.status),
    });
    expect(done.ok && done.value.status).toBe('confirmed');
    expect(gets[0]).toMatch(/\/status\/req-[^?]+$/); // the record first, as it is
    for (const [i, url] of gets.slice(1).entries()) {
      expect(url).toContain(`known_status=${seen[i]}`); // then a wait for a change from the state last seen
      expect(url).toMatch(/[?&]wait=\d+/);
    }
    expect(seen.at(-1)).toBe('confirmed');
  });

  it('a missing key is the API’s own 401, shown as it is; a bad body its 400 code', async () => {
    const anonymous = createClient({ baseUrl: svc.url, apiKey: undefined });
    const r = await anonymous.wallet('x');
    expect(r.ok).toBe(false);
    expect(!r.ok && r.error).toMatchObject({ status: 401, code: 'missing X-API-Key header' });
    const { apiKey } = await svc.newKey('sponsored');
    const bad = await createClient({ baseUrl: svc.url, apiKey }).execute({ ...call('client-2'), calldata: 'nope' });
    expect(!bad.ok && bad.error).toMatchObject({ status: 400, code: 'invalid_calldata' });
  });

  it('a 402 carries its quote, typed', async () => {
    const { apiKey } = await svc.newKey('manual');
    const r = await createClient({ baseUrl: svc.url, apiKey }).execute(call('client-3'));
    expect(r.ok).toBe(false);
    const e = (r as { error: ApiError }).error;
    expect(e.status).toBe(402);
    expect(e.payment).toMatchObject({ error: 'payment_required', chain: 'base', accepted_tokens: ['USDC', 'aUSD'] });
  });

  it('an execute whose answer was lost is retried with its Idempotency-Key: the same request, run once', async () => {
    const { apiKey, clientId } = await svc.newKey('sponsored');
    let dropped = 0;
    // The first answer never reaches the caller: the service has the request, the caller does not know.
    const lossy: typeof fetch = async (input, init) => {
      const res = await fetch(input, init);
      if (dropped++ === 0) throw new TypeError('fetch failed: socket hang up');
      return res;
    };
    const client = createClient({ baseUrl: svc.url, apiKey, fetch: lossy, retryBaseMs: 10 });
    const r = await client.execute(call('client-4'));
    if (!r.ok) throw r.error;
    expect(dropped).toBe(2);
    const mine = (await svc.store.list('ExecutionRequest')).items.filter((x) => x.spec.apiClient === clientId);
    expect(mine.map((x) => x.metadata.name)).toEqual([r.value.request_id]);
    // The id was known before any answer: what the service derives from the key's client id and the Idempotency-Key.
    expect(client.requestIdFor(r.idempotencyKey)).toBe(r.value.request_id);
    expect(r.requestId).toBe(r.value.request_id);
  });

  it('no service at all: an unanswered error after its retries, never an exception', async () => {
    const r = await createClient({ baseUrl: 'http://127.0.0.1:1', apiKey: 'x', attempts: 2, retryBaseMs: 1 }).health();
    expect(!r.ok && r.error).toMatchObject({ status: 0, code: 'no_answer' });
  });
});
