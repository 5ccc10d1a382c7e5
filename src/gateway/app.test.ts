import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { FAMILIES } from '../protocols/index.ts';
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

  it('a known path with another method → 405 method_not_allowed with Allow, before auth and before the body', async () => {
    const cases: Array<[string, string, string]> = [
      ['DELETE', '/execute', 'POST'],
      ['GET', '/execute', 'POST'],
      ['PUT', '/simulate', 'POST'],
      ['POST', '/health', 'GET, HEAD'],
      ['PATCH', '/status/req-1', 'GET, HEAD'],
      ['TRACE', '/wallet/balance?agent_id=a', 'GET, HEAD'],
      ['OPTIONS', '/feed/recent', 'GET, HEAD'],
    ];
    for (const [method, url, allow] of cases) {
      const res = await gw.app.inject({ method: method as 'GET', url });
      expect(res.statusCode, `${method} ${url}`).toBe(405);
      expect(res.headers.allow).toBe(allow);
      expect(res.json()).toEqual({
        error: 'method_not_allowed',
        message: `${method} is not allowed on ${url.split('?')[0]}; allowed: ${allow}`,
      });
    }
    // Not even a body that could not be parsed, or a QUERY without a content type, changes the answer.
    const bad = await gw.app.inject({
      method: 'PUT',
      url: '/execute',
      headers: { 'content-type': 'application/json' },
      payload: '{"agent_id": ',
    });
    expect([bad.statusCode, bad.headers.allow]).toEqual([405, 'POST']);
    const query = await gw.app.inject({ method: 'QUERY' as 'GET', url: '/status/req-1' });
    expect([query.statusCode, query.headers.allow]).toEqual([405, 'GET, HEAD']);
    const head = await gw.app.inject({ method: 'HEAD', url: '/execute' });
    expect([head.statusCode, head.headers.allow, head.body]).toEqual([405, 'POST', '']);
  });

  it('an unknown path → 404 whatever the method and the body', async () => {
    for (const method of ['GET', 'POST', 'DELETE', 'QUERY']) {
      const res = await gw.app.inject({
        method: method as 'GET',
        url: '/execute/more',
        headers: { 'content-type': 'application/json' },
        payload: '{"not json',
      });
      expect(res.statusCode, method).toBe(404);
      expect(res.headers.allow).toBeUndefined();
      expect(res.json()).toEqual({ error: 'not_found', message: `no route ${method} /execute/more` });
    }
  });

  it('a __proto__ or constructor.prototype key in a body is dropped like any unknown field, and pollutes nothing', async () => {
    const payload =
      '{"__proto__": {"polluted": true}, "constructor": {"prototype": {"polluted": true}}, "agent_id": "a", ' +
      '"chain": "base", "target_contract": "0x5FbDB2315678afecb367f032d93F642f64180aa3", "calldata": "0x", ' +
      '"batch_calls": [{"target_contract": "0x5FbDB2315678afecb367f032d93F642f64180aa3", "calldata": "0x", "__proto__": {}}]}';
    const res = await gw.app.inject({
      method: 'POST',
      url: '/execute',
      headers: { 'x-api-key': apiKey, 'content-type': 'application/json' },
      payload,
    });
    // Parsed and validated (it mixes both shapes), not refused as "not valid JSON".
    expect(res.statusCode).toBe(400);
    expect(res.json().error).toBe('invalid_request_shape');
    expect(({} as Record<string, unknown>).polluted).toBeUndefined();
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
      store: { synced: true, writable: true },
      chains: [],
      protocols: [],
    });
  });

  it('GET /openapi.json documents every route from the zod schemas', async () => {
    const res = await gw.app.inject({ url: '/openapi.json' });
    expect(res.statusCode).toBe(200);
    const doc = res.json();
    expect(doc.openapi).toBe('3.1.0');
    // The core routes, and each served family's under its spec slug (aliases are served but not listed).
    const protocolPaths = FAMILIES.flatMap((f) =>
      f.endpoints.flatMap((e: { kind: string; path: string }) =>
        e.kind === 'read' ? [`/protocols/${f.slug}/${e.path}`] : [`/protocols/${f.slug}/${e.path}`, `/protocols/${f.slug}/${e.path}/simulate`],
      ),
    );
    expect(Object.keys(doc.paths).sort()).toEqual(
      // A read and an action may share a path (perp-v2's GET and POST /orders): one path, two methods.
      [...new Set(['/execute', '/feed/recent', '/health', '/policy', '/policy/evaluate', '/simulate', '/status/{id}', '/status/{id}/cancel', '/wallet', '/wallet/balance', ...protocolPaths])].sort(),
    );
    expect(Object.keys(doc.paths).some((p) => FAMILIES.some((f) => f.aliases.some((a) => p.startsWith(`/protocols/${a}/`))))).toBe(false);
    expect(doc.components.securitySchemes.apiKey).toEqual({ type: 'apiKey', in: 'header', name: 'X-API-Key' });
    const execute = doc.paths['/execute'].post;
    expect(execute.security).toEqual([{ apiKey: [] }]);
    // Spec §2.4's two shapes as alternatives: each forbids the other's fields (`not: {}`).
    const body = execute.requestBody.content['application/json'].schema;
    expect(body.oneOf).toHaveLength(2);
    const [single, batch] = body.oneOf;
    expect(Object.keys(single.properties)).toEqual(
      expect.arrayContaining(['agent_id', 'chain', 'target_contract', 'calldata', 'value', 'strategy_id', 'callback_url']),
    );
    expect(single.required).toEqual(['agent_id', 'chain', 'target_contract', 'calldata']);
    expect(single.properties.batch_calls).toMatchObject({ not: {} });
    expect(batch.required).toEqual(['agent_id', 'chain', 'batch_calls']);
    expect(batch.properties.batch_calls).toMatchObject({ type: 'array', minItems: 1, maxItems: 20 });
    for (const field of ['target_contract', 'calldata', 'value']) expect(batch.properties[field]).toMatchObject({ not: {} });
    expect(single.properties.chain.pattern).toBeDefined();
    expect(single.properties.target_contract.pattern).toBe('^0x[0-9a-fA-F]{40}$');
    expect(execute.parameters).toContainEqual(expect.objectContaining({ in: 'header', name: 'idempotency-key' }));
    const simulateBody = doc.paths['/simulate'].post.requestBody.content['application/json'].schema;
    expect(simulateBody.required).toEqual(['agent_id', 'chain', 'target_contract', 'calldata']);
    expect(simulateBody.properties.batch_calls).toMatchObject({ not: {} });
    const result = execute.responses['200'].content['application/json'].schema;
    expect(result.required.sort()).toEqual(
      ['estimated_cost_usd', 'estimated_gas', 'message', 'request_id', 'smart_wallet_address', 'status', 'tx_hash'].sort(),
    );
    expect(result.properties.estimated_gas.type).toBe('integer');
    // Every status a route can answer is declared, each error one with the one error body.
    expect(Object.keys(execute.responses).sort()).toEqual(['200', '400', '401', '402', '403', '409', '413', '415', '422', '429', '431', '500', '503']);
    expect(execute.responses['400']).toEqual({
      description: expect.any(String),
      content: { 'application/json': { schema: { $ref: '#/components/schemas/ErrorBody' } } },
    });
    expect(doc.components.schemas.ErrorBody).toMatchObject({ type: 'object', required: ['error', 'message'] });
    // Named schemas: the error body, the protocols' Amount and each family's position; each one referenced.
    expect(Object.keys(doc.components.schemas)).toEqual(expect.arrayContaining(['ErrorBody', 'Amount']));
    for (const name of Object.keys(doc.components.schemas)) expect(JSON.stringify(doc.paths)).toContain(`#/components/schemas/${name}`);
    expect(Object.keys(doc.paths['/health'].get.responses).sort()).toEqual(['200', '429', '500', '503']);
    expect(Object.keys(doc.paths['/status/{id}'].get.responses).sort()).toEqual(['200', '400', '401', '404', '414', '429', '500', '503']);
    expect(doc.paths['/feed/recent'].get.parameters).toContainEqual(
      expect.objectContaining({ name: 'limit', schema: { type: 'integer', minimum: 1, maximum: 100, default: 20 } }),
    );
    expect(doc.paths['/health'].get.security).toBeUndefined();
    expect(doc.paths['/status/{id}'].get.responses['200'].content['application/json'].schema.required).toEqual(
      expect.arrayContaining(['request_id', 'status', 'chain', 'tx_hash', 'cost_usd', 'created_at', 'updated_at']),
    );
  });
});
