import { appendFileSync, existsSync, statSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { tempDir } from '../../test/support/env.ts';
import { defaultJournalPath, openJournal } from './journal.ts';

const sent = (key: string, over: Partial<Parameters<ReturnType<typeof openJournal>['recordSent']>[0]> = {}) => ({
  base_url: 'http://svc',
  client_id: 'c1',
  idempotency_key: key,
  request_id: `req-idem-${key}`,
  body: { agent_id: 'a', chain: 'base' },
  ...over,
});

describe('the local journal of executes', () => {
  it('keeps what was sent before any answer, then the answer; last() and find() see both', () => {
    const j = openJournal(join(tempDir('aw-journal-'), 'sub', 'journal.jsonl'));
    j.recordSent(sent('k1'));
    const before = j.last({ baseUrl: 'http://svc', clientId: 'c1' });
    expect(before?.requestId).toBe('req-idem-k1');
    expect(before?.answer).toBeUndefined();
    j.recordAnswer({ idempotency_key: 'k1', request_id: 'req-idem-k1', outcome: 'queued', http_status: 200 });
    j.recordSent(sent('k2', { client_id: 'c2' }));
    j.recordSent(sent('k3', { base_url: 'http://other' }));
    expect(j.last({ baseUrl: 'http://svc', clientId: 'c1' })).toMatchObject({ requestId: 'req-idem-k1', answer: { outcome: 'queued' } });
    expect(j.last({ baseUrl: 'http://svc', clientId: null })?.sent.idempotency_key).toBe('k2');
    expect(j.find('req-idem-k3')?.sent.base_url).toBe('http://other');
    expect(statSync(j.path).mode & 0o777).toBe(0o600); // bodies may say what an agent does
  });

  it('a torn or foreign line is skipped, never fatal; a re-send of the same key is the newest', () => {
    const path = join(tempDir('aw-journal-'), 'journal.jsonl');
    const j = openJournal(path);
    j.recordSent(sent('k1'));
    appendFileSync(path, '{"v":1,"kind":"sent","at":"2026\nnot json at all\n');
    j.recordSent(sent('k2'));
    j.recordSent(sent('k1'));
    expect(j.records().map((r) => r.sent.idempotency_key)).toEqual(['k2', 'k1']);
  });

  it('rotates to .1 past its size and still reads both files', () => {
    const path = join(tempDir('aw-journal-'), 'journal.jsonl');
    writeFileSync(path, `${JSON.stringify({ v: 1, kind: 'sent', at: 'x', ...sent('old') })}\n${'#'.repeat(8 * 1024 * 1024 + 1)}\n`);
    const j = openJournal(path);
    j.recordSent(sent('new'));
    expect(existsSync(`${path}.1`)).toBe(true);
    expect(statSync(path).size).toBeLessThan(1024);
    expect(j.records().map((r) => r.sent.idempotency_key)).toEqual(['old', 'new']);
  });

  it('lives under XDG_STATE_HOME unless AGENT_WALLET_JOURNAL says otherwise', () => {
    expect(defaultJournalPath({ XDG_STATE_HOME: '/s' })).toBe('/s/agent-wallet/journal.jsonl');
    expect(defaultJournalPath({ AGENT_WALLET_JOURNAL: '/j.jsonl', XDG_STATE_HOME: '/s' })).toBe('/j.jsonl');
  });
});
