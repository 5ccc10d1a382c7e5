import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { openTestGateway, type TestGateway } from './testing/harness.ts';

describe('gateway plumbing: errors, health, OpenAPI', () => {
  let gw: TestGateway;
  let apiKey: string;
  beforeEach(async () => {
    gw = await openTestGateway({ bodyLimitBytes: 2048, version: '9.9.9-test' });
    ({ apiKey } = await gw.newKey());
  });
  afterEach(() => gw.close());

  it('unknown routes → 404 not_found JSON', async () => {
    const res = await gw.app.inject({ url: '/no/such/route' });
    expect(res.statusCode).toBe(404);
    expect(res.json()).toEqual({ error: 'not_found', message: 'no route GET /no/such/route' });
  });

  it('malformed JSON → 400 invalid_json; empty JSON body too', async () => {
    const headers = { 'x-api-key': apiKey, 'content-type': 'application/json' };
    const bad = await gw.app.inject({ method: 'POST', url: '/execute', headers, payload: '{"agent_id": ' });
    expect(bad.statusCode).toBe(400);
    expect(bad.json()).toEqual({ error: 'invalid_json', message: 'request body is not valid JSON' });
    const empty = await gw.app.inject({ method: 'POST', url: '/execute', headers, payload: '' });
    expect(empty.statusCode).toBe(400);
    expect(empty.json().error).toBe('invalid_json');
  });

  it('a body over the limit → 413 payload_too_large', async () => {
    const res = await gw.app.inject({
      method: 'POST',
      url: '/execute',
      headers: { 'x-api-key': apiKey },
      payload: { agent_id: 'a', chain: 'base', target_contract: `0x${'11'.repeat(20)}`, calldata: `0x${'00'.repeat(2048)}` },
    });
    expect(res.statusCode).toBe(413);
    expect(res.json().error).toBe('payload_too_large');
  });

  it('a non-JSON content type → 415 unsupported_media_type', async () => {
    const res = await gw.app.inject({
      method: 'POST',
      url: '/simulate',
      headers: { 'x-api-key': apiKey, 'content-type': 'text/plain' },
      payload: 'hello',
    });
    expect(res.statusCode).toBe(415);
    expect(res.json().error).toBe('unsupported_media_type');
  });

  it('unexpected errors → generic 500 with a trace id and nothing else', async () => {
    gw.app.get('/boom', async () => {
      throw new Error('db password is hunter2');
    });
    const res = await gw.app.inject({ url: '/boom' });
    expect(res.statusCode).toBe(500);
    expect(res.json()).toEqual({ error: 'internal_error', message: 'internal error', trace_id: res.headers['x-trace-id'] });
    expect(res.body).not.toContain('hunter2');
  });

  it('GET /health reports version, uptime, store sync and chains', async () => {
    const res = await gw.app.inject({ url: '/health' });
    expect(res.statusCode).toBe(200);
    expect(res.json()).toEqual({
      status: 'ok',
      version: '9.9.9-test',
      uptime_seconds: expect.any(Number),
      time: expect.any(String),
      store: { synced: true },
      chains: [],
    });
  });

  it('GET /openapi.json documents every route from the zod schemas', async () => {
    const res = await gw.app.inject({ url: '/openapi.json' });
    expect(res.statusCode).toBe(200);
    const doc = res.json();
    expect(doc.openapi).toBe('3.1.0');
    expect(Object.keys(doc.paths).sort()).toEqual(
      ['/execute', '/feed/recent', '/health', '/simulate', '/status/{id}', '/wallet', '/wallet/balance'].sort(),
    );
    expect(doc.components.securitySchemes.apiKey).toEqual({ type: 'apiKey', in: 'header', name: 'X-API-Key' });
    const execute = doc.paths['/execute'].post;
    expect(execute.security).toEqual([{ apiKey: [] }]);
    const body = execute.requestBody.content['application/json'].schema;
    expect(Object.keys(body.properties)).toEqual(
      expect.arrayContaining(['agent_id', 'chain', 'target_contract', 'calldata', 'value', 'batch_calls', 'strategy_id', 'callback_url']),
    );
    expect(body.required).toEqual(['agent_id', 'chain']);
    expect(execute.parameters).toContainEqual(expect.objectContaining({ in: 'header', name: 'idempotency-key' }));
    const result = execute.responses['200'].content['application/json'].schema;
    expect(result.required.sort()).toEqual(
      ['estimated_cost_usd', 'estimated_gas', 'message', 'request_id', 'smart_wallet_address', 'status', 'tx_hash'].sort(),
    );
    expect(result.properties.estimated_gas.type).toBe('integer');
    expect(Object.keys(execute.responses)).toEqual(expect.arrayContaining(['200', '400', '401', '402', '429']));
    expect(doc.paths['/health'].get.security).toBeUndefined();
    expect(doc.paths['/status/{id}'].get.responses['200'].content['application/json'].schema.required).toEqual(
      expect.arrayContaining(['request_id', 'status', 'chain', 'tx_hash', 'cost_usd', 'created_at', 'updated_at']),
    );
  });
});
