import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { ANNOTATIONS, newRequestId } from '../api/v1alpha1/index.ts';
import { executionRequest, openTestGateway, type TestGateway } from './testing/harness.ts';

/** The answers an outside conformance audit found wrong against docs/api.md, each as it should be now. */
describe('gateway conformance', () => {
  let gw: TestGateway;
  let key: string;
  let clientId: string;
  beforeAll(async () => {
    gw = await openTestGateway();
    ({ apiKey: key, clientId } = await gw.newKey());
  });
  afterAll(() => gw.close());

  const post = (url: string, payload: string) =>
    gw.app.inject({ method: 'POST', url, payload, headers: { 'x-api-key': key, 'content-type': 'application/json' } });
  const get = (url: string) => gw.app.inject({ url, headers: { 'x-api-key': key } });
  const body = (agent: string) =>
    `{"agent_id":${agent},"chain":"base","target_contract":"0x5FbDB2315678afecb367f032d93F642f64180aa3","calldata":"0x","value":"0"}`;

  it('refuses an agent_id that is not well-formed Unicode, in the body and in the query', async () => {
    const lone = await post('/execute', body('"x\\ud800y"'));
    expect(lone.statusCode).toBe(400);
    expect(lone.json()).toMatchObject({ error: 'invalid_agent_id', field: 'agent_id', message: expect.stringContaining('well-formed') });
    // A surrogate pair is one character: accepted by validation (and then refused only for the chain not served here).
    expect((await post('/execute', body('"x\\ud83d\\ude00y"'))).json().error).toBe('unsupported_chain');
    for (const q of ['agent_id=x%FFy', 'agent_id=x%ED%A0%80y', 'agent_id=x%zzy']) {
      const res = await get(`/wallet?${q}`);
      expect(res.statusCode, q).toBe(400);
      expect(res.json().error, q).toBe('invalid_agent_id');
    }
    expect((await get('/wallet?agent_id=%E2%82%AC&chain=base')).json().error).toBe('unsupported_chain'); // "€" is fine
  });

  it('says a query parameter was given twice', async () => {
    const res = await get('/wallet?agent_id=a&agent_id=b');
    expect(res.statusCode).toBe(400);
    expect(res.json()).toMatchObject({ error: 'duplicate_parameter', field: 'agent_id', message: 'agent_id was given 2 times; give it once' });
    expect((await gw.app.inject({ url: '/feed/recent?limit=1&limit=2' })).json().error).toBe('duplicate_parameter');
  });

  it('answers a body of JSON null invalid_request, not missing_field', async () => {
    const res = await post('/execute', 'null');
    expect(res.statusCode).toBe(400);
    expect(res.json()).toMatchObject({ error: 'invalid_request', field: 'body' });
  });

  it('sends X-Trace-Id with a 414', async () => {
    const res = await get(`/status/${'a'.repeat(2_000)}`);
    expect(res.statusCode).toBe(414);
    expect(res.headers['x-trace-id']).toMatch(/^[0-9a-f-]{36}$/);
  });

  it('gives created_at and updated_at in milliseconds', async () => {
    const accepted = newRequestId(Date.parse('2030-01-02T03:04:05.678Z'));
    const req = executionRequest('req-created-ms', clientId);
    req.metadata.annotations = { [ANNOTATIONS.accepted]: accepted };
    await gw.store.create(req);
    const res = await get('/status/req-created-ms');
    expect(res.json().created_at).toBe('2030-01-02T03:04:05.678Z');
    expect(res.json().updated_at).toMatch(/\.\d{3}Z$/);
  });
});
