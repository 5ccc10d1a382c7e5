import { execFileSync } from 'node:child_process';
import { createHash, randomBytes } from 'node:crypto';
import { existsSync } from 'node:fs';
import { mkdir, mkdtemp, open, readdir, readFile, rm, rmdir, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import type { ApiClient } from '../../api/v1alpha1/index.ts';
import { codeOf, collect, summary } from '../conformance.ts';
import { StoreError } from '../types.ts';
import { openEmbeddedStore, type EmbeddedStore } from './index.ts';
import { recordKey } from './records.ts';
import { faultyFiles } from './testing/faultyFiles.ts';
import { apiClient } from './testing/fixtures.ts';
import { listSegments, readSegment } from './wal.ts';

let dir: string;
let store: EmbeddedStore | undefined;

beforeEach(async () => {
  dir = await mkdtemp(join(tmpdir(), 'aw-recovery-'));
});
afterEach(async () => {
  await store?.close();
  store = undefined;
  await rm(dir, { recursive: true, force: true });
});

async function until(cond: () => boolean): Promise<void> {
  for (let i = 0; !cond(); i++) {
    if (i > 1_000) throw new Error('condition not reached in 10 s');
    await new Promise((r) => setTimeout(r, 10));
  }
}

/** Names of the ApiClients in every record of the log, whatever their kind of record. */
async function loggedNames(storeDir: string): Promise<string[]> {
  const names: string[] = [];
  for (const seg of await listSegments(storeDir)) {
    for (const rec of (await readSegment(seg.path)).records) names.push(recordKey(rec).name);
  }
  return names;
}

describe('a failed log write (faults injected at the log’s file operations)', () => {
  it('full disk: writes fail with Unavailable, reads go on, health says why; once space returns the next write succeeds without a reopen', async () => {
    const files = faultyFiles();
    // No retry timer: the write itself must bring the store back.
    store = await openEmbeddedStore({ dir, files, recoveryRetryMs: 0 });
    const a = await store.create(apiClient('a'));
    const watched = collect<ApiClient>();
    store.watch('ApiClient', { resourceVersion: a.metadata.resourceVersion! }, watched.onEvent);

    files.space = 300; // part of the next batch fits, then ENOSPC: a torn record in the log
    const refused = await Promise.allSettled([
      store.create(apiClient('b1')),
      store.create(apiClient('b2')),
      store.updateStatus({ ...a, status: { rotatedAt: 'refused' } }),
    ]);
    expect(refused.map((r) => (r.status === 'rejected' ? (r.reason as StoreError).code : 'ok'))).toEqual([
      'Unavailable',
      'Unavailable',
      'Unavailable',
    ]);
    const health = store.health();
    expect(health).toMatchObject({ writable: false, recovering: true, reason: expect.stringMatching(/^ENOSPC/) });
    expect(new Date((health as { since: string }).since).getTime()).not.toBeNaN();
    expect(await store.get('ApiClient', 'a')).toEqual(a); // reads go on
    expect(await codeOf(store.create(apiClient('c')))).toBe('Unavailable'); // still full
    expect(await codeOf(store.delete('ApiClient', 'a'))).toBe('Unavailable');
    expect(store.health()).toMatchObject({ writable: false, since: (health as { since: string }).since });

    files.space = undefined; // space is freed
    const d = await store.create(apiClient('d'));
    expect(store.health()).toEqual({ writable: true });
    // The refused writes' revisions were never visible: the next write takes the next one.
    expect(d.metadata.resourceVersion).toBe(String(Number(a.metadata.resourceVersion) + 1));
    const a2 = await store.updateStatus({ ...a, status: { rotatedAt: 'after' } });
    await watched.until(2);
    expect(watched.events.map(summary)).toEqual([`ADDED d@${d.metadata.resourceVersion}`, `MODIFIED a@${a2.metadata.resourceVersion}`]);

    await store.close();
    store = await openEmbeddedStore({ dir });
    expect((await store.list('ApiClient')).items.sort((x, y) => x.metadata.name.localeCompare(y.metadata.name))).toEqual([a2, d]);
    expect(await loggedNames(dir)).toEqual(['a', 'd', 'a']);
  });

  it('failed fdatasync (EIO): the refused write, whole in the file, is cut off and never comes back', async () => {
    const files = faultyFiles();
    store = await openEmbeddedStore({ dir, files, recoveryRetryMs: 0 });
    const a = await store.create(apiClient('a'));
    files.failSync = true;
    expect(await codeOf(store.create(apiClient('b')))).toBe('Unavailable');
    expect(store.health()).toMatchObject({ writable: false, reason: expect.stringMatching(/^EIO/) });
    files.failSync = false;
    const c = await store.create(apiClient('c'));
    await store.close();
    store = await openEmbeddedStore({ dir });
    expect((await store.list('ApiClient')).items.map((o) => o.metadata.name).sort()).toEqual(['a', 'c']);
    expect(await store.get('ApiClient', 'c')).toEqual(c);
    expect(await store.get('ApiClient', 'a')).toEqual(a);
    expect(await loggedNames(dir)).toEqual(['a', 'c']);
  });

  it('recovers on its own, with no write to try: health turns writable again', async () => {
    const files = faultyFiles();
    store = await openEmbeddedStore({ dir, files, recoveryRetryMs: 20 });
    await store.create(apiClient('a'));
    files.space = 0;
    expect(await codeOf(store.create(apiClient('b')))).toBe('Unavailable');
    const faults = files.faults;
    await until(() => files.faults > faults + 1); // the timer's attempts fail while the disk is full
    expect(store.health()).toMatchObject({ writable: false, recovering: true });
    files.space = undefined;
    await until(() => store!.health().writable);
    expect((await store.create(apiClient('c'))).metadata.resourceVersion).toBe('2');
  });

  it('stops for good when the log on disk lost acknowledged records: health says so, onFatal is told, nothing is served', async () => {
    const files = faultyFiles();
    const fatal: StoreError[] = [];
    store = await openEmbeddedStore({ dir, files, recoveryRetryMs: 0, onFatal: (e) => fatal.push(e) });
    await store.create(apiClient('a'));
    const b = await store.create(apiClient('b'));
    const watch = store.watch('ApiClient', { resourceVersion: b.metadata.resourceVersion! }, () => undefined);
    files.failSync = true; // and stays so: the store's first recovery attempt fails too, so nothing is cut yet
    expect(await codeOf(store.create(apiClient('c')))).toBe('Unavailable');
    await until(() => files.faults >= 2);
    const [segment] = await listSegments(dir);
    const text = await readFile(segment!.path, 'utf8');
    await writeFile(segment!.path, text.slice(0, text.indexOf('\n') + 1)); // the disk lost b
    files.failSync = false;

    expect(await codeOf(store.create(apiClient('d')))).toBe('Unavailable');
    expect(store.health()).toMatchObject({ writable: false, recovering: false, reason: expect.stringMatching(/is not what was committed/) });
    expect(fatal).toHaveLength(1);
    expect(fatal[0]).toMatchObject({ code: 'Unavailable', message: expect.stringMatching(/must restart/) });
    expect(await codeOf(store.get('ApiClient', 'a'))).toBe('Unavailable'); // memory holds what the disk lost
    await expect(watch.done).rejects.toMatchObject({ code: 'Unavailable' });
  });
});

/**
 * The real thing: a tmpfs of a few MiB, filled up by another file beside the store (as the devnet's are in the
 * data directory). Mounting needs root, which CI has; as root a failed mount fails the test.
 */
const root = process.getuid?.() === 0;
describe.skipIf(!root)('a real full file system (tmpfs; needs root to mount)', () => {
  let mnt: string;
  beforeEach(async () => {
    mnt = await mkdtemp(join(tmpdir(), 'aw-tmpfs-'));
    execFileSync('mount', ['-t', 'tmpfs', '-o', 'size=4m', 'tmpfs', mnt]);
  });
  afterEach(async () => {
    await store?.close();
    store = undefined;
    execFileSync('umount', [mnt]);
    await rmdir(mnt);
  });

  it('refuses writes while full, leaves the files beside it whole, and writes again once space is freed', async () => {
    const storeDir = join(mnt, 'store');
    const neighbour = join(mnt, 'devnet', 'manifest.json');
    await mkdir(join(mnt, 'devnet'));
    await writeFile(neighbour, randomBytes(64 << 10));
    const neighbourHash = createHash('sha256').update(await readFile(neighbour)).digest('hex');
    store = await openEmbeddedStore({ dir: storeDir, recoveryRetryMs: 0, compactFloorBytes: 1 << 30 });
    const acked = new Map<string, ApiClient>();
    const write = async (name: string) => {
      const obj = await store!.create(apiClient(name, { labels: { pad: 'x'.repeat(63) } }));
      acked.set(name, obj);
    };
    for (let i = 0; i < 50; i++) await write(`before-${i}`);

    // Another file takes every byte left.
    const filler = join(mnt, 'filler');
    const fill = async () => {
      const fh = await open(filler, 'w');
      try {
        for (;;) await fh.write(Buffer.alloc(64 << 10));
      } catch (e) {
        expect(e).toMatchObject({ code: 'ENOSPC' });
      } finally {
        await fh.close();
      }
    };
    await fill();

    // The log's last page may still take a record or two; the one that crosses into a new page is written in
    // part (a short write, then ENOSPC); from then on the store refuses writes.
    const refused: string[] = [];
    for (let i = 0; refused.length < 20; i++) {
      try {
        await write(`full-${i}`);
      } catch (e) {
        expect(e).toMatchObject({ code: 'Unavailable' });
        refused.push(`full-${i}`);
      }
      if (i > 1_000) throw new Error('the full disk kept taking writes');
    }
    expect(store.health()).toMatchObject({ writable: false, recovering: true, reason: expect.stringMatching(/^ENOSPC/) });

    await rm(filler);
    await write('after');
    expect(store.health()).toEqual({ writable: true });

    // A snapshot does not fit either: compaction fails and leaves no temporary file taking space.
    await fill();
    await expect(store.compact()).rejects.toMatchObject({ code: 'ENOSPC' });
    expect((await readdir(storeDir)).filter((f) => f.endsWith('.tmp'))).toEqual([]);
    await rm(filler);
    await store.compact();
    expect(existsSync(join(storeDir, 'snapshot.jsonl'))).toBe(true);
    await write('after-compaction');

    await store.close();
    store = await openEmbeddedStore({ dir: storeDir });
    const { items } = await store.list('ApiClient');
    expect(new Map(items.map((o) => [o.metadata.name, o]))).toEqual(acked);
    for (const name of refused) expect(acked.has(name)).toBe(false);
    expect(createHash('sha256').update(await readFile(neighbour)).digest('hex')).toBe(neighbourHash);
  });
});
