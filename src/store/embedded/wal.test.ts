import { appendFile, mkdtemp, open, readFile, rm, stat, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { openEmbeddedStore } from './index.ts';
import { apiClient } from './testing/fixtures.ts';
import { WalWriter, decodeLine, encodeRecord, listSegments, readSegment, type WalItem } from './wal.ts';

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

describe('records', () => {
  it('round-trip, and a changed byte fails the checksum', () => {
    const line = encodeRecord(7, 'ADDED', 'ApiClient', 'default', 'a', JSON.stringify(apiClient('a')));
    expect(line.endsWith('\n')).toBe(true);
    const rec = decodeLine(line.slice(0, -1));
    expect(rec).toMatchObject({ rev: 7, type: 'ADDED', kind: 'ApiClient', namespace: 'default', name: 'a' });
    expect(rec?.object).toEqual(apiClient('a'));
    expect(decodeLine(line.slice(0, -1).replace('"name":"a"', '"name":"b"'))).toBeUndefined();
    expect(decodeLine(line.slice(0, 40))).toBeUndefined();
  });
});

describe('torn tail', () => {
  it('a half-written last line is dropped and cut off; the store goes on', async () => {
    const path = await writeSome(['a', 'b']);
    const good = (await stat(path)).size;
    const torn = encodeRecord(3, 'ADDED', 'ApiClient', 'default', 'c', JSON.stringify(apiClient('c')));
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
    const line = encodeRecord(2, 'ADDED', 'ApiClient', 'default', 'b', JSON.stringify(apiClient('b')));
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
  it('fails once on a write error, hands back every item in flight, and refuses more', async () => {
    const fh = await open(join(dir, 'seg.log'), 'a');
    const committed: WalItem[] = [];
    const failed: { error: unknown; items: WalItem[] }[] = [];
    const wal = new WalWriter<WalItem>(dir, fh, 1, {
      fsync: true,
      onCommit: (items) => committed.push(...items),
      onFail: (error, items) => failed.push({ error, items }),
    });
    wal.append({ line: 'one\n' });
    await wal.drain();
    expect(committed).toHaveLength(1);
    await fh.close(); // the next write hits a closed descriptor: a real EBADF from the kernel
    wal.append({ line: 'two\n' });
    wal.append({ line: 'three\n' });
    await wal.drain();
    expect(failed).toHaveLength(1);
    expect(failed[0]!.items.map((i) => i.line)).toEqual(['two\n', 'three\n']);
    expect(() => wal.append({ line: 'four\n' })).toThrow(/failed/);
    await expect(wal.rotate(() => 5)).rejects.toThrow(/failed/);
  });

  it('rotation starts a new segment after everything before it is committed', async () => {
    const wal = await WalWriter.open<WalItem & { n: number }>(dir, 1, {
      fsync: true,
      onCommit: () => undefined,
      onFail: (e) => {
        throw e;
      },
    });
    const line = (n: number) => encodeRecord(n, 'ADDED', 'ApiClient', 'default', `o${n}`, JSON.stringify(apiClient(`o${n}`)));
    wal.append({ n: 1, line: line(1) });
    wal.append({ n: 2, line: line(2) });
    const boundary = await wal.rotate(() => 3);
    wal.append({ n: 3, line: line(3) });
    await wal.close();
    expect(boundary).toBe(3);
    const segments = await listSegments(dir);
    expect(segments.map((s) => s.startRev)).toEqual([1, 3]);
    expect((await readSegment(segments[0]!.path)).records.map((r) => r.rev)).toEqual([1, 2]);
    expect((await readSegment(segments[1]!.path)).records.map((r) => r.rev)).toEqual([3]);
  });
});
