import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { openTestGateway, type TestGateway } from './testing/harness.ts';

const TARGET = '0x5FbDB2315678afecb367f032d93F642f64180aa3';
const single = { agent_id: 'agent-1', chain: 'base', target_contract: TARGET, calldata: '0xd09de08a', value: '0' };
const call = { target_contract: TARGET, calldata: '0xd09de08a', value: '0' };

describe('gateway request validation (spec §2.4, §7)', () => {
  let gw: TestGateway;
  let apiKey: string;
  beforeAll(async () => {
    gw = await openTestGateway();
    ({ apiKey } = await gw.newKey());
  });
  afterAll(() => gw.close());

  const post = (url: string, payload: unknown) =>
    gw.app.inject({ method: 'POST', url, headers: { 'x-api-key': apiKey }, payload: payload as object });

  /** [case, body, expected error code, expected field] */
  const cases: Array<[string, Record<string, unknown>, string, string]> = [
    ['unsupported chain', { ...single, chain: 'solana' }, 'unsupported_chain', 'chain'],
    ['chain of the wrong type', { ...single, chain: 1 }, 'unsupported_chain', 'chain'],
    ['chain with a space around it', { ...single, chain: ' base' }, 'unsupported_chain', 'chain'],
    ['calldata without 0x', { ...single, calldata: 'd09de08a' }, 'invalid_calldata', 'calldata'],
    ['calldata with an odd number of digits', { ...single, calldata: '0xd09de08' }, 'invalid_calldata', 'calldata'],
    ['calldata that is not hex', { ...single, calldata: '0xzz' }, 'invalid_calldata', 'calldata'],
    ['target that is too short', { ...single, target_contract: '0x1234' }, 'invalid_target_contract', 'target_contract'],
    ['target without 0x', { ...single, target_contract: TARGET.slice(2) }, 'invalid_target_contract', 'target_contract'],
    [
      'target with a broken EIP-55 checksum',
      { ...single, target_contract: TARGET.replace('F', 'f') },
      'invalid_target_contract',
      'target_contract',
    ],
    ['missing agent_id', { ...single, agent_id: undefined }, 'missing_field', 'agent_id'],
    ['empty agent_id', { ...single, agent_id: '' }, 'invalid_agent_id', 'agent_id'],
    ['agent_id over 256 characters', { ...single, agent_id: 'a'.repeat(257) }, 'invalid_agent_id', 'agent_id'],
    ['agent_id with a control character', { ...single, agent_id: 'a\nb' }, 'invalid_agent_id', 'agent_id'],
    ['missing chain', { ...single, chain: undefined }, 'missing_field', 'chain'],
    ['missing calldata', { ...single, calldata: undefined }, 'missing_field', 'calldata'],
    ['missing target_contract', { ...single, target_contract: undefined }, 'missing_field', 'target_contract'],
    ['no call at all', { agent_id: 'a', chain: 'base' }, 'missing_field', 'target_contract'],
    ['value as a JSON number', { ...single, value: 1 }, 'invalid_value', 'value'],
    ['negative value', { ...single, value: '-1' }, 'invalid_value', 'value'],
    ['fractional value', { ...single, value: '1.5' }, 'invalid_value', 'value'],
    ['hex value', { ...single, value: '0x10' }, 'invalid_value', 'value'],
    ['value with a leading zero', { ...single, value: '01' }, 'invalid_value', 'value'],
    ['value above uint256', { ...single, value: (2n ** 256n).toString() }, 'invalid_value', 'value'],
    ['http callback_url', { ...single, callback_url: 'http://example.com/hook' }, 'invalid_callback_url', 'callback_url'],
    ['callback_url with credentials', { ...single, callback_url: 'https://u:p@example.com/' }, 'invalid_callback_url', 'callback_url'],
    ['callback_url that is not a URL', { ...single, callback_url: 'example.com' }, 'invalid_callback_url', 'callback_url'],
    ['callback_url with a port out of range', { ...single, callback_url: 'https://example.com:65536/' }, 'invalid_callback_url', 'callback_url'],
    ['callback_url with a space', { ...single, callback_url: 'https://example.com/a b' }, 'invalid_callback_url', 'callback_url'],
    ['both shapes', { ...single, batch_calls: [call] }, 'invalid_request_shape', 'body'],
    ['both shapes, batch empty', { ...single, batch_calls: [] }, 'invalid_request_shape', 'body'],
    ['empty batch', { agent_id: 'a', chain: 'base', batch_calls: [] }, 'invalid_batch_calls', 'batch_calls'],
    ['batch that is not an array', { agent_id: 'a', chain: 'base', batch_calls: call }, 'invalid_batch_calls', 'batch_calls'],
    [
      'batch call with bad calldata',
      { agent_id: 'a', chain: 'base', batch_calls: [call, { ...call, calldata: '0x1' }] },
      'invalid_calldata',
      'batch_calls[1].calldata',
    ],
    [
      'batch call without target',
      { agent_id: 'a', chain: 'base', batch_calls: [{ calldata: '0x' }] },
      'missing_field',
      'batch_calls[0].target_contract',
    ],
    [
      'oversize batch (the key allows 20)',
      { agent_id: 'a', chain: 'base', batch_calls: Array.from({ length: 21 }, () => call) },
      'batch_too_large',
      'batch_calls',
    ],
  ];

  it.each(cases)('POST /execute: %s → 400 %s naming %s', async (_name, body, code, field) => {
    const res = await post('/execute', body);
    expect(res.statusCode).toBe(400);
    const json = res.json();
    expect(json.error).toBe(code);
    expect(json.field).toBe(field);
    expect(json.message).toMatch(new RegExp(`^${field.replace(/[[\].]/g, '\\$&')} `));
    expect(json.issues).toContainEqual({ field, code, message: json.message });
    // Validation refuses before anything is created.
    expect((await gw.store.list('ExecutionRequest')).items).toHaveLength(0);
  });

  it.each(cases.filter(([name]) => !/batch|shapes/.test(name)))('POST /simulate: %s → 400 %s', async (_n, body, code, field) => {
    const res = await post('/simulate', body);
    expect(res.statusCode).toBe(400);
    expect(res.json()).toMatchObject({ error: code, field });
  });

  it('POST /simulate refuses the batch shape', async () => {
    const res = await post('/simulate', { agent_id: 'a', chain: 'base', batch_calls: [call] });
    expect(res.statusCode).toBe(400);
    expect(res.json()).toMatchObject({ field: 'batch_calls', message: expect.stringContaining('not supported on /simulate') });
  });

  it('reports every issue, not only the first', async () => {
    const res = await post('/execute', { agent_id: '', chain: 'x', target_contract: '0x1', calldata: '0x1', value: 'x' });
    expect(res.json().issues.map((i: { field: string }) => i.field).sort()).toEqual(
      ['agent_id', 'calldata', 'chain', 'target_contract', 'value'].sort(),
    );
  });

  it('a body mixing the shapes reports the shape first, then only the present fields that are wrong', async () => {
    const res = await post('/execute', { ...single, chain: 'solana', calldata: undefined, batch_calls: [{ ...call, calldata: '0x1' }] });
    expect(res.statusCode).toBe(400);
    const json = res.json();
    expect(json).toMatchObject({
      error: 'invalid_request_shape',
      field: 'body',
      message: 'body must use one shape: target_contract/calldata/value (single call) or batch_calls (batch), not both',
    });
    // No "calldata is required": the caller may well have meant the batch.
    expect(json.issues.map((i: { field: string; code: string }) => [i.field, i.code])).toEqual([
      ['body', 'invalid_request_shape'],
      ['chain', 'unsupported_chain'],
      ['batch_calls[0].calldata', 'invalid_calldata'],
    ]);
  });

  it('accepts what /openapi.json allows at the edges: all-uppercase addresses, 256 characters of any plane, IPv4 callbacks', async () => {
    // No chain worker is configured here: reaching the handler means the body passed validation.
    const served = 'chain base is not served by this deployment';
    for (const body of [
      { ...single, target_contract: `0x${TARGET.slice(2).toUpperCase()}` },
      { ...single, target_contract: TARGET.toLowerCase() },
      { ...single, agent_id: '😀'.repeat(256), strategy_id: '𝔘'.repeat(128) },
      { ...single, callback_url: 'https://127.0.0.1:8443/hook?x=ü' },
      { ...single, value: (2n ** 256n - 1n).toString() },
      { agent_id: 'a', chain: 'BaSe', batch_calls: [call], unknown_field: { nested: [1] } },
    ]) {
      const res = await post('/execute', body);
      expect([res.statusCode, res.json().message]).toEqual([400, served]);
    }
  });

  it('a body that is not an object → 400 naming the body', async () => {
    const res = await post('/execute', [1, 2]);
    expect(res.statusCode).toBe(400);
    expect(res.json()).toMatchObject({ error: 'invalid_request', field: 'body' });
  });

  it('aliases and any case are accepted: eth and arb reach the handler as ethereum and arbitrum', async () => {
    // No chain worker is configured here, so the handler answers with the canonical name it resolved.
    for (const [alias, canonical] of [
      ['eth', 'ethereum'],
      ['arb', 'arbitrum'],
      ['BASE', 'base'],
    ] as const) {
      const res = await post('/execute', { ...single, chain: alias });
      expect(res.statusCode).toBe(400);
      expect(res.json()).toMatchObject({ error: 'unsupported_chain', message: `chain ${canonical} is not served by this deployment` });
      const wallet = await gw.app.inject({ url: `/wallet?agent_id=a&chain=${alias}`, headers: { 'x-api-key': apiKey } });
      expect(wallet.json().message).toBe(`chain ${canonical} is not served by this deployment`);
    }
  });

  it('GET /wallet requires agent_id and defaults chain to ethereum', async () => {
    const missing = await gw.app.inject({ url: '/wallet', headers: { 'x-api-key': apiKey } });
    expect(missing.statusCode).toBe(400);
    expect(missing.json()).toMatchObject({ error: 'missing_field', field: 'agent_id' });
    const defaulted = await gw.app.inject({ url: '/wallet/balance?agent_id=a', headers: { 'x-api-key': apiKey } });
    expect(defaulted.json().message).toBe('chain ethereum is not served by this deployment');
  });

  it('Idempotency-Key must be printable ASCII of at most 255 characters', async () => {
    for (const key of ['é', 'a'.repeat(256)]) {
      const res = await gw.app.inject({
        method: 'POST',
        url: '/execute',
        headers: { 'x-api-key': apiKey, 'idempotency-key': key },
        payload: single,
      });
      expect(res.statusCode).toBe(400);
      expect(res.json()).toMatchObject({ error: 'invalid_idempotency_key', field: 'Idempotency-Key' });
    }
  });

  it('GET /feed/recent: limit must be an integer from 1 to 100', async () => {
    for (const limit of ['0', '101', 'abc', '1.5', '-1']) {
      const res = await gw.app.inject({ url: `/feed/recent?limit=${limit}` });
      expect(res.statusCode, limit).toBe(400);
      expect(res.json()).toMatchObject({ error: 'invalid_limit', field: 'limit' });
    }
    for (const limit of ['1', '100']) expect((await gw.app.inject({ url: `/feed/recent?limit=${limit}` })).statusCode).toBe(200);
  });
});
