import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import {
  decimalAtMostPattern,
  ExecuteBodySchema,
  ExecuteHeadersSchema,
  FeedQuerySchema,
  parseIfNoneMatch,
  preferredWait,
  SimulateBodySchema,
  STATUSES,
  StatusHeadersSchema,
  StatusQuerySchema,
  WalletQuerySchema,
} from '../api/http/index.ts';
import { openTestGateway, type TestGateway } from './testing/harness.ts';

/**
 * What /openapi.json publishes must be exactly what the validators accept (test/contract/ checks it against a
 * running service with schemathesis; this checks the hard cases directly). JSON Schema patterns are ECMA-262
 * regexes with the `u` flag, and JSON Schema counts string lengths in code points.
 */
const TARGET = '0x5FbDB2315678afecb367f032d93F642f64180aa3';
const single = { agent_id: 'agent-1', chain: 'base', target_contract: TARGET, calldata: '0xd09de08a', value: '0' };
const MAX_UINT256 = 2n ** 256n - 1n;

type JsonSchema = { pattern?: string; maxLength?: number; minLength?: number; [k: string]: unknown };

let doc: {
  paths: Record<string, Record<string, { requestBody?: { content: Record<string, { schema: { oneOf: unknown[] } & JsonSchema }> } }>>;
};
let single_: Record<string, JsonSchema>;
let gw: TestGateway;

beforeAll(async () => {
  gw = await openTestGateway();
  doc = (await gw.app.inject({ url: '/openapi.json' })).json();
  single_ = (doc.paths['/execute']!['post']!.requestBody!.content['application/json']!.schema.oneOf[0] as { properties: Record<string, JsonSchema> })
    .properties;
});
afterAll(() => gw.close());

/** Whether a string satisfies a published string schema (pattern and lengths, the JSON Schema way). */
function publishedAccepts(schema: JsonSchema, v: string): boolean {
  const length = [...v].length;
  if (schema.minLength !== undefined && length < schema.minLength) return false;
  if (schema.maxLength !== undefined && length > schema.maxLength) return false;
  return schema.pattern === undefined || new RegExp(schema.pattern, 'u').test(v);
}
const accepts = (field: string, v: string) => SimulateBodySchema.safeParse({ ...single, [field]: v }).success;

function expectSameVerdicts(field: string, values: string[]): void {
  for (const v of values) expect([v, accepts(field, v)]).toEqual([v, publishedAccepts(single_[field]!, v)]);
}

describe('the published request schema says exactly what is accepted', () => {
  it('value: the decimal numerals from 0 to 2^256-1', () => {
    const max = MAX_UINT256.toString();
    const values = ['0', '1', '9', '10', max, (MAX_UINT256 - 1n).toString(), (MAX_UINT256 + 1n).toString(), '9'.repeat(78)];
    values.push('1' + '0'.repeat(77), '1'.repeat(77), '9'.repeat(77), '01', '00', '-1', '1.5', '0x10', ' 1', '');
    // Same length as the maximum, differing at one digit: just below and just above.
    for (let i = 0; i < max.length; i++) {
      const d = Number(max[i]);
      if (d > (i === 0 ? 1 : 0)) values.push(max.slice(0, i) + String(d - 1) + '9'.repeat(max.length - i - 1));
      if (d < 9) values.push(max.slice(0, i) + String(d + 1) + '0'.repeat(max.length - i - 1));
    }
    expectSameVerdicts('value', values);
    expect(accepts('value', max)).toBe(true);
    expect(accepts('value', (MAX_UINT256 + 1n).toString())).toBe(false);
  });

  it('decimalAtMostPattern matches exactly 0..max, for every max', () => {
    for (const max of [0n, 1n, 9n, 10n, 19n, 20n, 99n, 100n, 101n, 255n, 1000n, 1009n]) {
      const re = new RegExp(decimalAtMostPattern(max), 'u');
      for (let i = 0n; i <= max + 1100n; i++) expect([max, i, re.test(i.toString())]).toEqual([max, i, i <= max]);
      expect(re.test(`0${max}`)).toBe(false);
      // positive: the same from 1 (a raw amount: the API refuses 0, so the published pattern must too).
      const positive = new RegExp(decimalAtMostPattern(max, { positive: true }), 'u');
      for (let i = 0n; i <= max + 1100n; i++) expect([max, i, positive.test(i.toString())]).toEqual([max, i, i >= 1n && i <= max]);
      expect(positive.test('')).toBe(false);
    }
  });

  it('chain: the names and aliases in any letter case, nothing else', () => {
    const values: string[] = [];
    for (const name of ['ethereum', 'base', 'arbitrum', 'eth', 'arb']) {
      values.push(name, name.toUpperCase(), name[0]!.toUpperCase() + name.slice(1), ` ${name}`, `${name} `, `${name}x`, name.slice(1));
    }
    values.push('', 'solana', 'Ethereum\n', 'ETHEREUM', 'ethereuM', 'sepolia');
    expectSameVerdicts('chain', values);
    expect(accepts('chain', 'ArB')).toBe(true);
    expect(accepts('chain', ' base')).toBe(false);
  });

  it('agent_id and strategy_id: lengths in code points, no control characters', () => {
    const astral = '😀';
    const values = ['a', '', 'a'.repeat(256), 'a'.repeat(257), astral.repeat(256), astral.repeat(257), 'a\u0000', 'a\u007f', 'a\u0085', 'tab\t'];
    expectSameVerdicts('agent_id', values);
    expect(accepts('agent_id', astral.repeat(256))).toBe(true); // 512 UTF-16 units, 256 characters
    expectSameVerdicts('strategy_id', [astral.repeat(128), astral.repeat(129), 'x'.repeat(128), 'x'.repeat(129), '']);
  });

  it('callback_url: https, a DNS name or IPv4 address, a port, no credentials, no spaces', () => {
    const values = [
      'https://example.com',
      'https://example.com/',
      'https://a.b-c.example:8443/hooks/x?y=1#z',
      'https://localhost:1/',
      'https://LOCALHOST:65535',
      'https://127.0.0.1:8443/hook',
      'https://255.255.255.255',
      'https://example.com/ünïcödé/😀',
      'https://example.com/%zz',
      'https://example.com?x',
      'https://example.com#',
      // refused, and the parser or the rule agrees:
      'http://example.com/',
      'HTTPS://example.com/',
      'https:example.com',
      'https://u:p@example.com/',
      'https://u@example.com/',
      'https://example.com:0/',
      'https://example.com:65536/',
      'https://example.com:/',
      'https://256.1.1.1/',
      'https://1.2.3/',
      'https://a.123/',
      'https://a.0x1f/',
      'https://xn--a.com/',
      'https://xn--ls8h.la/',
      'https://-a.com/',
      'https://a..b/',
      'https://example.com./',
      'https://[::1]/',
      'https://exa mple.com/',
      'https://example.com/a b',
      'https://example.com/\t',
      ' https://example.com/',
      'https://',
      'https://example.com\\@evil.com/',
      `https://example.com/${'a'.repeat(2048 - 20)}`,
      `https://example.com/${'a'.repeat(2048)}`,
    ];
    expectSameVerdicts('callback_url', values);
    expect(accepts('callback_url', 'https://u:p@example.com/')).toBe(false);
  });

  it('callback_url: whatever the published pattern matches, the URL parser parses (random URLs built from it)', () => {
    let seed = 42;
    const rnd = (n: number) => ((seed = (seed * 1103515245 + 12345) % 2 ** 31), seed % n);
    const pick = (s: string) => s[rnd(s.length)]!;
    const alnum = 'abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ0123456789';
    const label = (first: string) => {
      let l = pick(first);
      for (let i = rnd(6); i > 0; i--) l += pick(alnum + '--');
      return /-$/.test(l) ? `${l}a` : l;
    };
    const tail = ['', '/', '/a/b', '?q=1&r=%41', '#frag', '/é/😀?ü#ß', '/%', '/\\x', "/!$&'()*+,;=:@[]{}|^`~\u00a0"];
    for (let i = 0; i < 2000; i++) {
      const host =
        rnd(4) === 0
          ? [rnd(256), rnd(256), rnd(256), rnd(256)].join('.')
          : [...Array.from({ length: rnd(3) }, () => label(alnum)), label('abcdefghijklmnopqrstuvwxyzXN')].join('.');
      const port = rnd(3) === 0 ? `:${1 + rnd(65535)}` : '';
      const url = `https://${host}${port}${tail[rnd(tail.length)]!}`;
      const published = publishedAccepts(single_['callback_url']!, url);
      expect([url, accepts('callback_url', url)]).toEqual([url, published]);
    }
  });

  it('target_contract: the published pattern, plus the one rule JSON Schema cannot state (EIP-55 when mixed case)', () => {
    expectSameVerdicts('target_contract', [TARGET.toLowerCase(), `0x${TARGET.slice(2).toUpperCase()}`, TARGET, '0x1234', TARGET.slice(2), `${TARGET}00`]);
    const wrongChecksum = TARGET.replace('F', 'f');
    expect(publishedAccepts(single_['target_contract']!, wrongChecksum)).toBe(true);
    expect(accepts('target_contract', wrongChecksum)).toBe(false);
    expect(single_['target_contract']!['description']).toMatch(/EIP-55/);
  });

  it('POST /execute: exactly one of the two shapes (oneOf), whatever else the body holds', () => {
    const call = { target_contract: TARGET, calldata: '0x' };
    const fields = { target_contract: TARGET, calldata: '0x', value: '0', batch_calls: [call] } as const;
    const names = Object.keys(fields) as (keyof typeof fields)[];
    for (let mask = 0; mask < 1 << names.length; mask++) {
      const present = names.filter((_, i) => mask & (1 << i));
      const body = { agent_id: 'a', chain: 'base', ...Object.fromEntries(present.map((n) => [n, fields[n]])), extra: { x: 1 } };
      const has = (n: string) => present.includes(n as keyof typeof fields);
      // The two alternatives of the published oneOf: required fields present, forbidden ones absent.
      const singleShape = has('target_contract') && has('calldata') && !has('batch_calls');
      const batchShape = has('batch_calls') && !has('target_contract') && !has('calldata') && !has('value');
      expect([present, ExecuteBodySchema.safeParse(body).success]).toEqual([present, singleShape !== batchShape]);
      expect([present, SimulateBodySchema.safeParse(body).success]).toEqual([present, singleShape]);
    }
  });

  it('Idempotency-Key: 1 to 255 printable ASCII characters, no spaces around (HTTP strips them)', () => {
    const header = doc.paths['/execute']!['post'] as unknown as { parameters: { name: string; schema: JsonSchema }[] };
    const schema = header.parameters.find((p) => p.name === 'idempotency-key')!.schema;
    for (const v of ['a', 'a b', '~', '!'.repeat(255), '!'.repeat(256), '', ' a', 'a ', 'é', 'a\tb']) {
      expect([v, ExecuteHeadersSchema.safeParse({ 'idempotency-key': v }).success]).toEqual([v, publishedAccepts(schema, v)]);
    }
  });

  it('GET /wallet: chain defaults to ethereum; GET /feed/recent: limit is an integer from 1 to 100, default 20', () => {
    expect(WalletQuerySchema.parse({ agent_id: 'a' }).chain).toBe('ethereum');
    expect(WalletQuerySchema.safeParse({ agent_id: 'a', chain: '' }).success).toBe(false);
    const feed = doc.paths['/feed/recent']!['get'] as unknown as { parameters: { name: string; schema: JsonSchema }[] };
    expect(feed.parameters.find((p) => p.name === 'limit')!.schema).toEqual({ type: 'integer', minimum: 1, maximum: 100, default: 20 });
    for (const [text, value] of [['1', 1], ['100', 100], ['0', null], ['101', null], ['1.5', null], ['-1', null], ['1e1', null], ['0x10', null], ['', null], [' 5', null]] as const) {
      const parsed = FeedQuerySchema.safeParse({ limit: text });
      expect([text, parsed.success ? parsed.data.limit : null]).toEqual([text, value]);
    }
    expect(FeedQuerySchema.parse({}).limit).toBe(20);
  });
});

describe('GET /status/:id: the wait parameters as published', () => {
  type Parameter = { name: string; in: string; schema: JsonSchema };
  const parameter = (name: string) => (doc.paths['/status/{id}']!['get'] as unknown as { parameters: Parameter[] }).parameters.find((p) => p.name === name)!;

  it('wait: whole seconds; known_status: a status name; ETag and Preference-Applied documented', () => {
    expect(parameter('wait').schema.pattern).toBe('^[0-9]{1,9}$');
    expect(parameter('known_status').schema.enum).toEqual([...STATUSES]);
    for (const [text, value] of [['0', 0], ['1', 1], ['30', 30], ['31', 30], ['999999999', 30], ['-1', null], ['1.5', null], ['', null], ['1e1', null], [' 1', null]] as const) {
      const parsed = StatusQuerySchema.safeParse({ wait: text });
      expect([text, parsed.success ? parsed.data.wait : null]).toEqual([text, value]);
    }
    const headers = (doc.paths['/status/{id}']!['get'] as unknown as { responses: Record<string, { headers: object }> }).responses['200']!.headers;
    expect(Object.keys(headers)).toEqual(['ETag', 'Preference-Applied']);
  });

  it('Prefer and If-None-Match: the published patterns accept exactly what the validator does', () => {
    const verdicts = (name: 'prefer' | 'if-none-match', values: string[]) => {
      const schema = parameter(name).schema;
      // No \s outside "any character": engines differ on it (Python's takes \x1c-\x1f, found by schemathesis).
      expect(String(schema.pattern).replaceAll('[\\s\\S]', '')).not.toContain('\\s');
      for (const v of values) {
        expect([v, StatusHeadersSchema.safeParse({ [name]: v }).success]).toEqual([v, publishedAccepts(schema, v)]);
      }
    };
    const prefer = ['wait=1', 'WAIT=30', 'wait = 5', 'wait="5"', 'respond-async, wait=10', 'wait=10;x=y', 'return=minimal', 'handling=lenient', 'nowait=x', 'waiting=x',
      'wait=', 'wait', 'wait=x', 'wait=-1', 'wait=1.5', 'wait="5', 'respond-async, wait=soon', 'wait=1, wait=x', '', '\twait=5', '\u00a0wait=x', '\x1cwait=x', 'wait=5\u00a0'];
    const inm = ['"a"', 'W/"a"', '"a", "b"', ' "a" , W/"b" ', '*', '""', 'a', '"a" "b"', '"a",', '**', 'W/a', '"a\\"b"', '', '\x1c*', '\u00a0"a"', '\t"a"'];
    const random = Array.from({ length: 300 }, () => Array.from({ length: Math.floor(Math.random() * 12) }, () => ' ,;=W/"*wait0123456789ax'[Math.floor(Math.random() * 24)]).join(''));
    verdicts('prefer', [...prefer, ...random]);
    verdicts('if-none-match', [...inm, ...random]);
    expect(preferredWait('respond-async, wait=10')).toBe(10);
    expect(preferredWait('wait=45')).toBe(30);
    expect(preferredWait('return=minimal')).toBeUndefined();
    expect(preferredWait('wait=x')).toBe('invalid');
    expect(parseIfNoneMatch(' "a" , W/"b" ')).toEqual(['"a"', '"b"']);
  });
});
