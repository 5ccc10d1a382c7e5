import { mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import type { ApiClient } from '../../api/v1alpha1/index.ts';
import { codeOf, collect, summary } from '../conformance.ts';
import { openEmbeddedStore, type EmbeddedStore } from './index.ts';
import { apiClient, executionRequest, paymentReceipt } from './testing/fixtures.ts';

let dir: string;
let store: EmbeddedStore;

async function until(cond: () => boolean): Promise<void> {
  for (let i = 0; !cond(); i++) {
    if (i > 500) throw new Error('condition not reached');
    await new Promise((r) => setTimeout(r, 10));
  }
}

beforeEach(async () => {
  dir = await mkdtemp(join(tmpdir(), 'aw-store-'));
  store = await openEmbeddedStore({ dir });
});
afterEach(async () => {
  await store.close();
  await rm(dir, { recursive: true, force: true });
});

// The rules every backend shares are tested in ../conformance.ts (run on this store by conformance.test.ts).
// Here is only what the embedded store does its own way: namespace names checked by the store (no namespace
// object has to exist), lists across namespaces, dense numeric revisions, a history of exactly historyLimit
// revisions, group commit and durability.

describe('create', () => {
  it('rejects an invalid namespace name with Invalid (the API server says NotFound: its namespaces must exist)', async () => {
    expect(await codeOf(store.create(apiClient('a', { namespace: 'a.b' })))).toBe('Invalid');
    expect((await store.list('ApiClient')).items).toHaveLength(0);
  });
});

describe('list', () => {
  it('without a namespace spans every namespace, and returns the current revision', async () => {
    await store.create(apiClient('a', { labels: { team: 'x', tier: '1' } }));
    await store.create(apiClient('b', { labels: { team: 'x', tier: '2' } }));
    await store.create(apiClient('c', { labels: { team: 'y' }, namespace: 'ns1' }));
    await store.create(executionRequest('a'));
    const names = async (opts: Parameters<EmbeddedStore['list']>[1]) =>
      (await store.list('ApiClient', opts)).items.map((o) => o.metadata.name).sort();
    expect(await names({})).toEqual(['a', 'b', 'c']);
    expect(await names({ labelSelector: { team: 'x' } })).toEqual(['a', 'b']);
    expect(await names({ labelSelector: { team: 'y' } })).toEqual(['c']);
    const list = await store.list('ApiClient');
    expect(list.resourceVersion).toBe(store.currentRevision());
    expect(list.resourceVersion).toBe('4');
  });
});

describe('revisions', () => {
  it('increase by one per write across kinds and verbs, are strings, and are the events\' versions', async () => {
    const a = await store.create(apiClient('a'));
    const e = await store.create(executionRequest('e'));
    const s = await store.updateStatus({ ...e, status: { phase: 'Pending' } });
    const a2 = await store.update({ ...a, spec: { ...a.spec, enabled: false } });
    expect([a, e, s, a2].map((o) => o.metadata.resourceVersion)).toEqual(['1', '2', '3', '4']);
    expect(store.currentRevision()).toBe('4');
    await store.delete('ApiClient', 'a');
    expect(store.currentRevision()).toBe('5');
    const c = collect<ApiClient>();
    store.watch('ApiClient', { resourceVersion: '3' }, c.onEvent);
    await c.until(2);
    expect(c.events.map(summary)).toEqual(['MODIFIED a@4', 'DELETED a@5']);
  });

  it('a no-op update does not advance them', async () => {
    const a = await store.create(apiClient('a'));
    await store.update(a);
    expect(store.currentRevision()).toBe(a.metadata.resourceVersion);
  });
});

describe('watch', () => {
  it('without a resourceVersion sees a write made right after watch() returns, once that write has resolved', async () => {
    await store.create(apiClient('before'));
    const c = collect<ApiClient>();
    store.watch('ApiClient', {}, c.onEvent);
    await store.create(apiClient('a'));
    expect(c.events).toHaveLength(0); // the create resolved, the event is still on its way
    await c.until(1);
    await new Promise((r) => setTimeout(r, 20));
    expect(c.events.map(summary)).toEqual(['ADDED a@2']);
  });

  it('keeps historyLimit revisions: from the oldest kept a watch replays, from before it ends with Gone', async () => {
    await store.close();
    store = await openEmbeddedStore({ dir, historyLimit: 3 });
    for (const n of ['a', 'b', 'c', 'd', 'e']) await store.create(apiClient(n));
    const gone = store.watch('ApiClient', { resourceVersion: '1' }, () => undefined);
    await expect(gone.done).rejects.toMatchObject({ code: 'Gone' });
    const c = collect<ApiClient>();
    store.watch('ApiClient', { resourceVersion: '2' }, c.onEvent);
    await c.until(3);
    expect(c.events.map(summary)).toEqual(['ADDED c@3', 'ADDED d@4', 'ADDED e@5']);
  });
});

describe('history bytes', () => {
  it('keeps at most historyBytes of objects beyond the newest event, after reopen and live: older revisions are Gone', async () => {
    for (const n of ['a', 'b', 'c', 'd', 'e']) await store.create(apiClient(n));
    const all = store.stats().history;
    expect(all.events).toBe(5);
    const size = all.bytes / 5; // the five objects' JSON are as long as one another
    await store.close();
    // Room for two objects, not three.
    const opts = { dir, historyBytes: Math.floor(2.5 * size) };
    store = await openEmbeddedStore(opts);
    const replays = async (from: number, expected: string[]) => {
      const gone = store.watch('ApiClient', { resourceVersion: String(from - 1) }, () => undefined);
      await expect(gone.done).rejects.toMatchObject({ code: 'Gone' });
      const c = collect<ApiClient>();
      const w = store.watch('ApiClient', { resourceVersion: String(from) }, c.onEvent);
      await c.until(expected.length);
      expect(c.events.map(summary)).toEqual(expected);
      w.stop();
    };
    expect(store.stats().history).toEqual({ events: 2, bytes: 2 * size });
    await replays(3, ['ADDED d@4', 'ADDED e@5']);
    await store.create(apiClient('f'));
    expect(store.stats().history).toEqual({ events: 2, bytes: 2 * size });
    await replays(4, ['ADDED e@5', 'ADDED f@6']);
  });
});

describe('group commit', () => {
  it('writes issued in the same tick share one write and one fdatasync', async () => {
    const before = store.stats().wal;
    await Promise.all(Array.from({ length: 200 }, (_, i) => store.create(apiClient(`n${i}`))));
    const after = store.stats().wal;
    expect(after.batches - before.batches).toBe(1);
    expect(after.syncs - before.syncs).toBe(1);
    expect(after.records - before.records).toBe(200);
  });
});

describe('durability', () => {
  it('keeps objects, uids and revisions across close and reopen', async () => {
    const a = await store.create(apiClient('a', { labels: { team: 'x' } }));
    const e = await store.create(executionRequest('e'));
    await store.updateStatus({ ...e, status: { phase: 'Queued' } });
    await store.create(paymentReceipt('p'));
    await store.delete('PaymentReceipt', 'p');
    await store.close();
    store = await openEmbeddedStore({ dir });
    expect(await store.get('ApiClient', 'a')).toEqual(a);
    expect((await store.get('ExecutionRequest', 'e')).status?.phase).toBe('Queued');
    expect(await codeOf(store.get('PaymentReceipt', 'p'))).toBe('NotFound');
    expect(store.currentRevision()).toBe('5');
    const next = await store.create(apiClient('b'));
    expect(next.metadata.resourceVersion).toBe('6');
  });

  it('after reopen, a watch from a revision still in the log replays it', async () => {
    await store.create(apiClient('a'));
    await store.create(apiClient('b'));
    await store.close();
    store = await openEmbeddedStore({ dir });
    const c = collect<ApiClient>();
    store.watch('ApiClient', { resourceVersion: '1' }, c.onEvent);
    await c.until(1);
    expect(c.events.map(summary)).toEqual(['ADDED b@2']);
  });

  it('after reopen, the history is as deep as historyLimit, however long the log', async () => {
    await store.close();
    store = await openEmbeddedStore({ dir, historyLimit: 3 });
    for (let i = 1; i <= 10; i++) await store.create(apiClient(`o${i}`));
    await store.close();
    store = await openEmbeddedStore({ dir, historyLimit: 3 });
    const gone = store.watch('ApiClient', { resourceVersion: '5' }, () => undefined);
    await expect(gone.done).rejects.toMatchObject({ code: 'Gone' });
    const c = collect<ApiClient>();
    store.watch('ApiClient', { resourceVersion: '7' }, c.onEvent);
    await c.until(3);
    expect(c.events.map(summary)).toEqual(['ADDED o8@8', 'ADDED o9@9', 'ADDED o10@10']);
  });

  it('compaction writes a snapshot, drops the old log, and reopens the same state', async () => {
    for (let i = 0; i < 50; i++) await store.create(apiClient(`a${i}`));
    const during = Promise.all(Array.from({ length: 50 }, (_, i) => store.create(apiClient(`b${i}`))));
    await store.compact();
    await during;
    await store.delete('ApiClient', 'a0');
    expect(store.stats().snapshots).toBe(1);
    const rev = store.currentRevision();
    await store.close();
    store = await openEmbeddedStore({ dir });
    expect(store.currentRevision()).toBe(rev);
    const names = (await store.list('ApiClient')).items.map((o) => o.metadata.name);
    expect(names).toHaveLength(99);
    expect(names).not.toContain('a0');
    // Events covered by the snapshot are gone; those after it are still in the log.
    const old = store.watch('ApiClient', { resourceVersion: '10' }, () => undefined);
    await expect(old.done).rejects.toMatchObject({ code: 'Gone' });
    const c = collect<ApiClient>();
    store.watch('ApiClient', { resourceVersion: String(Number(rev) - 1) }, c.onEvent);
    await c.until(1);
    expect(c.events.map(summary)).toEqual([`DELETED a0@${rev}`]);
  });

  it('compacts on its own once the log passes the snapshot size times the ratio plus the floor', async () => {
    await store.close();
    store = await openEmbeddedStore({ dir, compactFloorBytes: 20_000, compactRatio: 1 });
    for (let i = 0; i < 10; i++) await Promise.all(Array.from({ length: 20 }, (_, j) => store.create(apiClient(`x${i}-${j}`))));
    await until(() => store.stats().snapshots > 0);
    await until(() => store.stats().wal.bytesSinceSnapshot <= 20_000 + store.stats().lastSnapshotBytes);
    const snapshot = store.stats().lastSnapshotBytes;
    expect(snapshot).toBeGreaterThan(40_000); // 200 objects
    // Past the floor but within snapshot + floor: no compaction; the threshold follows the live data.
    const before = store.stats().snapshots;
    const x = await store.get('ApiClient', 'x0-0');
    let current = x;
    while (store.stats().wal.bytesSinceSnapshot < 20_000 + snapshot / 2) {
      current = await store.update({ ...current, metadata: { ...current.metadata, labels: { n: String(Math.random()).slice(2, 12) } } });
    }
    expect(store.stats().snapshots).toBe(before);
    while (store.stats().wal.bytesSinceSnapshot < 20_000 + snapshot + 5_000 && store.stats().snapshots === before) {
      current = await store.update({ ...current, metadata: { ...current.metadata, labels: { n: String(Math.random()).slice(2, 12) } } });
    }
    await until(() => store.stats().snapshots > before);
    await store.close();
    store = await openEmbeddedStore({ dir });
    expect((await store.list('ApiClient')).items).toHaveLength(200);
    expect((await store.get('ApiClient', 'x0-0')).metadata.labels).toEqual(current.metadata.labels);
  });
});
