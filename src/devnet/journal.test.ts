import { appendFileSync, mkdtempSync, readdirSync, readFileSync, rmSync, statSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { gunzipSync, gzipSync } from 'node:zlib';
import { afterAll, describe, expect, test } from 'vitest';
import { gzipComment, withGzipComment } from './gzipComment.ts';
import { openJournal, outcomeOf, type ChainJournal, type JournalEntry } from './journal.ts';
import { lowWater, markSnapshot, readSnapshotMark, type JournalMark } from './journalMark.ts';
import { journalRetention } from './journalRetention.ts';
import { rpcMethodKind } from './rpcMethods.ts';

const dirs: string[] = [];
const newDir = (): string => {
  const dir = mkdtempSync(join(tmpdir(), 'agent-wallet-journal-'));
  dirs.push(dir);
  return join(dir, 'ethereum.journal');
};
afterAll(() => {
  for (const dir of dirs) rmSync(dir, { recursive: true, force: true });
});

async function open(dir: string): Promise<{ journal: ChainJournal; entries: JournalEntry[] }> {
  const opened = await openJournal(dir);
  if (!opened.ok) throw opened.error;
  return opened.value;
}

const segments = (dir: string): string[] => readdirSync(dir).sort();

describe('the journal', () => {
  test('calls are numbered in append order and read back with their outcomes, in the order they were answered', async () => {
    const dir = newDir();
    const { journal, entries } = await open(dir);
    expect(entries).toEqual([]);
    const first = journal.append([{ method: 'eth_sendRawTransactionSync', params: ['0x01'] }, { method: 'anvil_setBalance', params: ['0xab', '0x1'] }]);
    const second = journal.append([{ method: 'evm_mine', params: [] }]);
    expect([...first.seqs, ...second.seqs]).toEqual([0, 1, 2]);
    await Promise.all([first.durable, second.durable]);
    await journal.recordOutcome(2, { ok: true, result: '0x0' });
    await journal.recordOutcome(0, { ok: true, result: { transactionHash: '0xaa', status: '0x1', gasUsed: '0x5208', blockNumber: '0x7' } });
    await journal.recordOutcome(1, { ok: false, error: { code: -32602, message: 'invalid params' } });
    // A later outcome (a send's receipt, once mined) completes the first; the answers' order stays the first's.
    await journal.recordOutcome(2, { ok: true, result: '0x1' });
    await journal.close();

    const again = await open(dir);
    expect(again.journal.id).toBe(journal.id);
    expect(again.journal.nextSeq).toBe(3);
    expect(again.entries.map((e) => [e.seq, e.method, e.answered, e.outcome?.ok])).toEqual([
      [0, 'eth_sendRawTransactionSync', 1, true],
      [1, 'anvil_setBalance', 2, false],
      [2, 'evm_mine', 0, true],
    ]);
    expect(again.entries[1]!.outcome).toEqual({ ok: false, error: { code: -32602, message: 'invalid params' } });
    expect(again.entries[2]!.outcome).toEqual({ ok: true, result: '0x1' });
    expect(again.journal.append([{ method: 'evm_mine', params: [] }]).seqs).toEqual([3]);
    await again.journal.close();
  });

  test('a line the crash cut short is dropped and appending resumes on a clean line; a bad line before good ones is an error', async () => {
    const dir = newDir();
    const { journal } = await open(dir);
    await journal.append([{ method: 'evm_mine', params: [] }]).durable;
    await journal.close();
    const [segment] = segments(dir);
    appendFileSync(join(dir, segment!), '{"seq":1,"t":1,"method":"evm_mi');

    const again = await open(dir);
    expect(again.entries.map((e) => e.seq)).toEqual([0]);
    await again.journal.append([{ method: 'anvil_mine', params: ['0x2'] }]).durable;
    await again.journal.close();
    const third = await open(dir);
    expect(third.entries.map((e) => [e.seq, e.method])).toEqual([
      [0, 'evm_mine'],
      [1, 'anvil_mine'],
    ]);
    await third.journal.close();

    const lines = readFileSync(join(dir, segment!), 'utf8').split('\n');
    lines[1] = '{"seq":0,"t":1,"method":"evm_mine","par';
    writeFileSync(join(dir, segment!), lines.join('\n'));
    const corrupt = await openJournal(dir);
    expect(corrupt.ok).toBe(false);
    if (!corrupt.ok) expect(corrupt.error.code).toBe('JournalCorrupt');
  });

  test('rotate() starts a segment at the next call and drops those wholly below what the kept snapshots need', async () => {
    const dir = newDir();
    const { journal } = await open(dir);
    await journal.append([{ method: 'evm_mine', params: [] }, { method: 'evm_mine', params: [] }]).durable; // 0, 1
    await journal.rotate(0);
    await journal.append([{ method: 'evm_mine', params: [] }]).durable; // 2
    await journal.recordOutcome(1, { ok: true, result: '0x0' }); // an outcome lands in the later segment
    await journal.rotate(0);
    await journal.rotate(0); // nothing appended since: no new segment
    expect(segments(dir)).toEqual(['00000000000000000000.ndjson', '00000000000000000002.ndjson', '00000000000000000003.ndjson']);
    expect(journal.firstSeq).toBe(0);

    // A snapshot that holds everything below 2: the first segment goes, its outcome with it.
    await journal.rotate(2);
    expect(segments(dir)).toEqual(['00000000000000000002.ndjson', '00000000000000000003.ndjson']);
    expect(journal.firstSeq).toBe(2);
    await journal.append([{ method: 'evm_mine', params: [] }]).durable; // 3
    await journal.close();

    const again = await open(dir);
    expect(again.entries.map((e) => e.seq)).toEqual([2, 3]);
    expect(again.journal.firstSeq).toBe(2);
    expect(again.journal.nextSeq).toBe(4);
    await again.journal.close();
    for (const name of segments(dir)) expect(statSync(join(dir, name)).mode & 0o777).toBe(0o600);
  });

  test('retention keeps what the previous snapshot needs too (it is the fallback of a torn current one)', async () => {
    const dir = newDir();
    const { journal } = await open(dir);
    const mark = (seq: number, unsettled: number[] = []): JournalMark => ({ journal: journal.id, seq, unsettled, automine: true });
    const kept = journalRetention(journal, { current: { mark: mark(0) } });
    const append = async (n: number) => journal.append(Array.from({ length: n }, () => ({ method: 'evm_mine', params: [] }))).durable;
    await append(3); // 0-2
    await kept.saved(mark(3)); // current 3, previous 0
    expect(journal.firstSeq).toBe(0);
    await append(2); // 3-4
    await kept.saved(mark(5, [4])); // current 5 (4 unsettled), previous 3
    expect(journal.firstSeq).toBe(3);
    await append(1); // 5
    await kept.saved(mark(6)); // current 6, previous 5 with 4 unsettled: 4 stays, and 3 with it
    expect(lowWater(mark(5, [4]))).toBe(4);
    // Segments start at each rotation (here at 0, 3, 5, 6): one goes only when all of it is below what is needed.
    expect(journal.firstSeq).toBe(3);
    await journal.close();
    const again = await open(dir);
    expect(again.entries.map((e) => e.seq)).toEqual([3, 4, 5]);
    await again.journal.close();
  });
});

describe('outcomeOf', () => {
  test('keeps errors, small results and what a replay needs of a receipt; nothing of anything bigger', () => {
    expect(outcomeOf({ error: { code: -32003, message: 'nonce too low' } })).toEqual({ ok: false, error: { code: -32003, message: 'nonce too low' } });
    expect(outcomeOf({ result: '0x1' })).toEqual({ ok: true, result: '0x1' });
    expect(outcomeOf({ result: true })).toEqual({ ok: true, result: true });
    expect(outcomeOf({ result: null })).toEqual({ ok: true, result: null });
    expect(outcomeOf({ result: `0x${'00'.repeat(1000)}` })).toEqual({ ok: true });
    const receipt = { transactionHash: '0xaa', status: '0x1', gasUsed: '0x5208', blockNumber: '0x9', transactionIndex: '0x0', logs: [], logsBloom: '0x00' };
    expect(outcomeOf({ result: receipt })).toEqual({ ok: true, result: { transactionHash: '0xaa', status: '0x1', gasUsed: '0x5208', blockNumber: '0x9', transactionIndex: '0x0' } });
  });
});

describe('rpcMethodKind', () => {
  test('reads are an allow-list: anything it does not know is journaled', () => {
    expect(['eth_call', 'eth_getLogs', 'eth_fillTransaction', 'txpool_status', 'anvil_dumpState', 'eth_newFilter'].map(rpcMethodKind)).toEqual(Array(6).fill('read'));
    expect(['eth_sendRawTransaction', 'eth_sendRawTransactionSync'].map(rpcMethodKind)).toEqual(['send', 'send']);
    expect(['eth_sendTransaction', 'anvil_setBalance', 'evm_snapshot', 'evm_revert', 'anvil_someFutureCheat'].map(rpcMethodKind)).toEqual(Array(5).fill('write'));
  });
});

describe("a snapshot's mark, in its gzip header", () => {
  const json = JSON.stringify({ block: {}, accounts: {}, best_block_number: 7, blocks: [], transactions: [] });

  test('travels in the comment field: gunzip reads the same bytes, an unmarked snapshot reads as such', () => {
    const gz = gzipSync(json);
    const mark: JournalMark = { journal: 'j-1', seq: 42, unsettled: [40], automine: false };
    const marked = markSnapshot(gz, mark);
    expect(gunzipSync(marked).toString()).toBe(json);
    expect(readSnapshotMark(marked)).toEqual({ ok: true, mark });
    expect(readSnapshotMark(gz)).toEqual({ ok: true, mark: undefined });
    // Marked again (a snapshot is never, but the header allows it): the old comment is replaced.
    expect(readSnapshotMark(markSnapshot(marked, { ...mark, seq: 43 }))).toEqual({ ok: true, mark: { ...mark, seq: 43 } });
    expect(readSnapshotMark(withGzipComment(gz, 'agent-wallet devnet journal mark {"seq":'))).toEqual({ ok: false, reason: 'its journal mark is garbled' });
    expect(readSnapshotMark(Buffer.from('not gzip'))).toMatchObject({ ok: false });
  });

  test('a header with a file name and an extra field keeps them', () => {
    const gz = gzipSync(json);
    // FEXTRA (2-byte length, then the field) and FNAME (zero-terminated), as other gzip writers put them.
    const header = Buffer.from(gz.subarray(0, 10));
    header[3] = 0x04 | 0x08;
    const extra = Buffer.from([4, 0, 0x41, 0x42, 2, 0]);
    const withFields = Buffer.concat([header, extra, Buffer.from('state.json\0', 'latin1'), gz.subarray(10)]);
    expect(gunzipSync(withFields).toString()).toBe(json);
    const commented = withGzipComment(withFields, 'hello');
    expect(gzipComment(commented)).toBe('hello');
    expect(commented.subarray(10, 10 + extra.length + 11)).toEqual(Buffer.concat([extra, Buffer.from('state.json\0', 'latin1')]));
    expect(gunzipSync(commented).toString()).toBe(json);
  });
});
