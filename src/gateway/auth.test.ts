import { afterEach, beforeEach, describe, expect, it, vi } from 'vitest';
import { revokeKey, rotateKey } from '../keys/manage.ts';
import { openTestGateway, type TestGateway } from './testing/harness.ts';

describe('gateway authentication (spec §5)', () => {
  let gw: TestGateway;
  beforeEach(async () => {
    gw = await openTestGateway();
  });
  afterEach(() => gw.close());

  const protectedCalls = [
    { method: 'GET' as const, url: '/wallet?agent_id=a' },
    { method: 'GET' as const, url: '/wallet/balance?agent_id=a' },
    { method: 'POST' as const, url: '/simulate', payload: {} },
    { method: 'POST' as const, url: '/execute', payload: {} },
    { method: 'GET' as const, url: '/status/req-x' },
  ];

  it.each(protectedCalls)('$method $url without X-API-Key → 401 with the spec text', async (call) => {
    const res = await gw.app.inject(call);
    expect(res.statusCode).toBe(401);
    expect(res.json()).toEqual({ error: 'missing X-API-Key header', message: expect.any(String) });
  });

  it('an empty header counts as missing', async () => {
    const res = await gw.app.inject({ url: '/status/req-x', headers: { 'x-api-key': '  ' } });
    expect(res.statusCode).toBe(401);
    expect(res.json().error).toBe('missing X-API-Key header');
  });

  it('malformed, unknown, wrong-secret, revoked and rotated-away keys are all `invalid API key`', async () => {
    const { apiKey, clientId } = await gw.newKey();
    const wrongSecret = apiKey.slice(0, -4) + (apiKey.endsWith('AAAA') ? 'BBBB' : 'AAAA');
    const unknown = `aw_${'0'.repeat(16)}_${'A'.repeat(43)}`;
    const rotatedAway = apiKey;
    const { api_key: current } = await rotateKey(gw.store, clientId);
    const { apiKey: revoked, clientId: revokedId } = await gw.newKey();
    await revokeKey(gw.store, revokedId);

    for (const key of ['nope', unknown, wrongSecret, rotatedAway, revoked]) {
      const res = await gw.app.inject({ url: '/status/req-x', headers: { 'x-api-key': key } });
      expect(res.statusCode, key).toBe(401);
      expect(res.json()).toEqual({ error: 'invalid API key', message: expect.any(String) });
    }
    // The rotated key works: it gets past authentication to the route (404: no such request).
    const ok = await gw.app.inject({ url: '/status/req-x', headers: { 'x-api-key': current } });
    expect(ok.statusCode).toBe(404);
  });

  it('a key the gateway watches is authenticated without a store read; one not in its view yet is read from the store', async () => {
    const { apiKey: known } = await gw.newKey();
    const get = vi.spyOn(gw.store, 'get');
    const clientReads = () => get.mock.calls.filter(([kind]) => kind === 'ApiClient').length;
    // The view has it once its list (or its watch) delivered the create: from then on, no read.
    let res = await gw.app.inject({ url: '/status/req-x', headers: { 'x-api-key': known } });
    for (let i = 0; i < 100 && clientReads() > 0; i++) {
      await new Promise((r) => setTimeout(r, 10));
      get.mockClear();
      res = await gw.app.inject({ url: '/status/req-x', headers: { 'x-api-key': known } });
    }
    expect(res.statusCode).toBe(404); // past authentication
    expect(clientReads()).toBe(0);
    // Unknown to the view: the store answers (a key created a moment ago would be found there).
    const unknown = `aw_${'0'.repeat(16)}_${'A'.repeat(43)}`;
    expect((await gw.app.inject({ url: '/status/req-x', headers: { 'x-api-key': unknown } })).statusCode).toBe(401);
    expect(clientReads()).toBe(1);
    get.mockRestore();
  });

  it('authenticates before validating: a bad body from an unauthenticated caller is 401, not 400', async () => {
    const res = await gw.app.inject({ method: 'POST', url: '/execute', payload: { chain: 'solana' } });
    expect(res.statusCode).toBe(401);
  });

  it('public endpoints need no key', async () => {
    expect((await gw.app.inject({ url: '/health' })).statusCode).toBe(200);
    expect((await gw.app.inject({ url: '/feed/recent' })).statusCode).toBe(200);
    expect((await gw.app.inject({ url: '/openapi.json' })).statusCode).toBe(200);
  });
});
