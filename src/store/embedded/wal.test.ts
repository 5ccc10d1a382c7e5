import { appendFile, mkdtemp, readFile, rm, stat, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { crc32 } from 'node:zlib';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { openEmbeddedStore } from './index.ts';
import { apiClient } from './testing/fixtures.ts';
import { encodePut } from './records.ts';
import { faultyFiles } from './testing/faultyFiles.ts';
import { WalWriter, decodeLine, encodeLine, listSegments, readSegment, type WalItem } from './wal.ts';

const putLine = (rev: number, name: string) => encodeLine(encodePut(rev, 'ADDED', JSON.stringify(apiClient(name))));

let dir: string;
beforeEach(async () => {
  dir = await mkdtemp(join(tmpdir(), 'aw-wal-'));
});
afterEach(async () => {
  await rm(dir, { recursive: true, force: true });
});

async function writeSome(names: string[]): Promise<string> {
  const store = await openEmbeddedStore({ dir });
  for (const n of names) await store.create(apiClient(n));
  await store.close();
  const segments = await listSegments(dir);
  return segments.at(-1)!.path;
}

describe('lines', () => {
  it('round-trip, and a changed byte fails the checksum', () => {
    const line = putLine(7, 'a');
    expect(line.endsWith('\n')).toBe(true);
    expect(decodeLine(line.slice(0, -1))).toEqual({ rev: 7, op: 'put', type: 'ADDED', object: apiClient('a') });
    expect(decodeLine(line.slice(0, -1).replace('"name":"a"', '"name":"b"'))).toBeUndefined();
    expect(decodeLine(line.slice(0, 40))).toBeUndefined();
  });

  it('reads version 1 lines, as logs written before the compact records hold them', () => {
    const rec = `{"rev":3,"type":"MODIFIED","kind":"ApiClient","namespace":"default","name":"a","object":${JSON.stringify(apiClient('a'))}}`;
    const v1 = `{"crc":"${crc32(rec).toString(16).padStart(8, '0')}","rec":${rec}}`;
    expect(decodeLine(v1)).toEqual({ rev: 3, op: 'put', type: 'MODIFIED', object: apiClient('a') });
    expect(decodeLine(v1.replace('"rev":3', '"rev":4'))).toBeUndefined();
  });
});

describe('torn tail', () => {
  it('a half-written last line is dropped and cut off; the store goes on', async () => {
    const path = await writeSome(['a', 'b']);
    const good = (await stat(path)).size;
    const torn = putLine(3, 'c');
    await appendFile(path, torn.slice(0, torn.length / 2));
    let store = await openEmbeddedStore({ dir });
    expect((await store.list('ApiClient')).items.map((o) => o.metadata.name).sort()).toEqual(['a', 'b']);
    expect((await stat(path)).size).toBe(good);
    const c = await store.create(apiClient('c'));
    expect(c.metadata.resourceVersion).toBe('3');
    await store.close();
    store = await openEmbeddedStore({ dir });
    expect((await store.list('ApiClient')).items).toHaveLength(3);
    await store.close();
  });

  it('a complete record without its newline is torn too (the write did not finish)', async () => {
    const path = await writeSome(['a']);
    const line = putLine(2, 'b');
    await appendFile(path, line.slice(0, -1));
    const store = await openEmbeddedStore({ dir });
    expect((await store.list('ApiClient')).items).toHaveLength(1);
    await store.close();
  });

  it('zeros at the end (a size extended without its data) are a torn tail', async () => {
    const path = await writeSome(['a']);
    await appendFile(path, Buffer.alloc(4096));
    const store = await openEmbeddedStore({ dir });
    expect((await store.list('ApiClient')).items).toHaveLength(1);
    await store.close();
  });

  it('a bad record followed by good ones is corruption: open fails and says where', async () => {
    const path = await writeSome(['a', 'b', 'c']);
    const text = await readFile(path, 'utf8');
    await writeFile(path, text.replace('"name":"a"', '"name":"x"'));
    await expect(openEmbeddedStore({ dir })).rejects.toThrow(/corrupt: bad record at byte 0/);
    // The failed open released the lock: the error is the same the second time, not "owned by".
    await expect(openEmbeddedStore({ dir })).rejects.toThrow(/corrupt/);
  });
});

describe('WalWriter', () => {
  const open = (files = faultyFiles(), committed: WalItem[] = [], failed: { error: unknown; items: WalItem[] }[] = []) =>
    WalWriter.open<WalItem>(dir, { startRev: 1, bytes: 0, lastRev: undefined }, {
      fsync: true,
      files,
      onCommit: (items) => committed.push(...items),
      onFail: (error, items) => failed.push({ error, items }),
    });

  it('on a write error hands back every item not committed, refuses more, and recovers to append after the last good record', async () => {
    const files = faultyFiles();
    const committed: WalItem[] = [];
    const failed: { error: unknown; items: WalItem[] }[] = [];
    const wal = await open(files, committed, failed);
    wal.append({ rev: 1, line: putLine(1, 'one') });
    await wal.drain();
    expect(committed.map((i) => i.rev)).toEqual([1]);
    files.space = 100; // the disk fills up in the middle of the next batch
    wal.append({ rev: 2, line: putLine(2, 'two') });
    wal.append({ rev: 3, line: putLine(3, 'three') });
    await wal.drain();
    expect(failed).toHaveLength(1);
    expect(failed[0]!.error).toMatchObject({ code: 'ENOSPC' });
    expect(failed[0]!.items.map((i) => i.rev)).toEqual([2, 3]);
    expect(() => wal.append({ rev: 2, line: putLine(2, 'two') })).toThrow(/failed/);
    await expect(wal.rotate(() => 5)).rejects.toThrow(/failed/);

    // Still full: the tail is cut, the probe fails, the log stays failed.
    expect(await wal.recover()).toMatchObject({ ok: false, permanent: false, error: { code: 'ENOSPC' } });
    const [segment] = await listSegments(dir);
    expect((await readSegment(segment!.path)).tornBytes).toBe(0);
    files.space = undefined;
    expect(await wal.recover()).toEqual({ ok: true });
    wal.append({ rev: 2, line: putLine(2, 'two') });
    await wal.close();
    expect(committed.map((i) => i.rev)).toEqual([1, 2]);
    expect((await readSegment(segment!.path)).records.map((r) => r.rev)).toEqual([1, 2]);
  });

  it('after a failed fdatasync the record that reached the file is cut off, not kept', async () => {
    const files = faultyFiles();
    const failed: { error: unknown; items: WalItem[] }[] = [];
    const wal = await open(files, [], failed);
    wal.append({ rev: 1, line: putLine(1, 'one') });
    await wal.drain();
    files.failSync = true;
    wal.append({ rev: 2, line: putLine(2, 'two') });
    await wal.drain();
    expect(failed[0]!.error).toMatchObject({ code: 'EIO' });
    const [segment] = await listSegments(dir);
    expect((await readSegment(segment!.path)).records.map((r) => r.rev)).toEqual([1, 2]); // whole, but never acknowledged
    files.failSync = false;
    expect(await wal.recover()).toEqual({ ok: true });
    expect((await readSegment(segment!.path)).records.map((r) => r.rev)).toEqual([1]);
    await wal.close();
  });

  it('recovery is impossible when the segment lost committed records: it says so, for good', async () => {
    const files = faultyFiles();
    const wal = await open(files);
    wal.append({ rev: 1, line: putLine(1, 'one') });
    wal.append({ rev: 2, line: putLine(2, 'two') });
    await wal.drain();
    files.failSync = true;
    wal.append({ rev: 3, line: putLine(3, 'three') });
    await wal.drain();
    files.failSync = false;
    const [segment] = await listSegments(dir);
    const text = await readFile(segment!.path, 'utf8');
    await writeFile(segment!.path, text.slice(0, text.indexOf('\n') + 1)); // the disk lost record 2
    const result = await wal.recover();
    expect(result).toMatchObject({ ok: false, permanent: true });
    expect(String((result as { error: unknown }).error)).toMatch(/is not what was committed/);
    await wal.close();
  });

  it('a rotation whose sync fails fails the log like an append; after recovery it appends to the old segment', async () => {
    const files = faultyFiles();
    const failed: { error: unknown; items: WalItem[] }[] = [];
    const wal = await open(files, [], failed);
    wal.append({ rev: 1, line: putLine(1, 'one') });
    await wal.drain();
    files.failSync = true;
    await expect(wal.rotate(() => 2)).rejects.toMatchObject({ code: 'EIO' });
    expect(failed).toHaveLength(1);
    expect(() => wal.append({ rev: 2, line: putLine(2, 'two') })).toThrow(/failed/);
    files.failSync = false;
    expect(await wal.recover()).toEqual({ ok: true });
    wal.append({ rev: 2, line: putLine(2, 'two') });
    await wal.close();
    const segments = await listSegments(dir);
    expect(segments.map((s) => s.startRev)).toEqual([1]);
    expect((await readSegment(segments[0]!.path)).records.map((r) => r.rev)).toEqual([1, 2]);
  });

  it('rotation starts a new segment after everything before it is committed', async () => {
    const wal = await open();
    wal.append({ rev: 1, line: putLine(1, 'o1') });
    wal.append({ rev: 2, line: putLine(2, 'o2') });
    const boundary = await wal.rotate(() => 3);
    wal.append({ rev: 3, line: putLine(3, 'o3') });
    await wal.close();
    expect(boundary).toBe(3);
    const segments = await listSegments(dir);
    expect(segments.map((s) => s.startRev)).toEqual([1, 3]);
    expect((await readSegment(segments[0]!.path)).records.map((r) => r.rev)).toEqual([1, 2]);
    expect((await readSegment(segments[1]!.path)).records.map((r) => r.rev)).toEqual([3]);
  });
});
