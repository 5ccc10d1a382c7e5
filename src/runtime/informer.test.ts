import { mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import type { ApiClient } from '../api/v1alpha1/index.ts';
import { openEmbeddedStore, type EmbeddedStore } from '../store/embedded/index.ts';
import { apiClient } from '../store/embedded/testing/fixtures.ts';
import { isStoreError } from '../store/types.ts';
import { Informer } from './informer.ts';
import { cuttable } from './testing/cuttableStore.ts';
import { quiet, until } from './testing/support.ts';

let dir: string;
let store: EmbeddedStore;
const informers: Informer<'ApiClient'>[] = [];
beforeEach(async () => {
  dir = await mkdtemp(join(tmpdir(), 'aw-informer-'));
  store = await openEmbeddedStore({ dir });
});
afterEach(async () => {
  await Promise.all(informers.splice(0).map((i) => i.stop()));
  await store.close();
  await rm(dir, { recursive: true, force: true });
});

function informer(opts: Partial<ConstructorParameters<typeof Informer<'ApiClient'>>[0]> = {}): Informer<'ApiClient'> {
  const inf = new Informer({ store, kind: 'ApiClient', logger: quiet, ...opts });
  informers.push(inf);
  return inf;
}

/** name → resourceVersion, for comparing a cache with the store. */
const versions = (items: ApiClient[]) =>
  Object.fromEntries(items.map((o) => [o.metadata.name, o.metadata.resourceVersion]).sort());

describe('Informer', () => {
  it('lists, syncs, then follows adds, updates and deletes', async () => {
    await store.create(apiClient('a'));
    await store.create(apiClient('b'));
    const inf = informer();
    const log: string[] = [];
    inf.addEventHandler({
      onAdd: (o) => log.push(`add ${o.metadata.name}`),
      onUpdate: (old, o) => log.push(`update ${o.metadata.name} ${old.spec.enabled}->${o.spec.enabled}`),
      onDelete: (o) => log.push(`delete ${o.metadata.name}`),
    });
    expect(inf.hasSynced()).toBe(false);
    inf.start();
    await inf.waitForSync();
    expect(inf.hasSynced()).toBe(true);
    expect(log.sort()).toEqual(['add a', 'add b']);
    const a = await store.get('ApiClient', 'a');
    await store.update({ ...a, spec: { ...a.spec, enabled: false } });
    await store.delete('ApiClient', 'b');
    await store.create(apiClient('c'));
    await until(() => log.length === 5);
    expect(log.slice(2)).toEqual(['update a true->false', 'delete b', 'add c']);
    expect(inf.get('a')?.spec.enabled).toBe(false);
    expect(inf.get('b')).toBeUndefined();
    expect(inf.resourceVersion).toBe(store.currentRevision());
  });

  it('hands frozen objects to handlers and mutable copies to readers', async () => {
    await store.create(apiClient('a', { labels: { team: 'x' } }));
    const inf = informer();
    let seen: ApiClient | undefined;
    inf.addEventHandler({ onAdd: (o) => (seen = o) });
    inf.start();
    await inf.waitForSync();
    expect(() => {
      seen!.metadata.labels!.team = 'y';
    }).toThrow(TypeError);
    const copy = inf.get('a')!;
    copy.metadata.labels!.team = 'y';
    expect(inf.get('a')!.metadata.labels!.team).toBe('x');
    expect(inf.list((o) => o.metadata.labels?.team === 'x')).toHaveLength(1);
  });

  it('maintains a secondary index', async () => {
    const inf = informer({ indexers: { team: (o) => (o.metadata.labels?.team ? [o.metadata.labels.team] : []) } });
    inf.start();
    await inf.waitForSync();
    await store.create(apiClient('a', { labels: { team: 'x' } }));
    const b = await store.create(apiClient('b', { labels: { team: 'x' } }));
    await store.create(apiClient('c', { labels: { team: 'y' } }));
    await until(() => inf.size === 3);
    expect(inf.byIndex('team', 'x').map((o) => o.metadata.name).sort()).toEqual(['a', 'b']);
    await store.update({ ...b, metadata: { ...b.metadata, labels: { team: 'y' } } });
    await store.delete('ApiClient', 'c');
    await until(() => inf.byIndex('team', 'y').length === 1 && inf.byIndex('team', 'x').length === 1);
    expect(inf.byIndex('team', 'y').map((o) => o.metadata.name)).toEqual(['b']);
    expect(inf.countByIndex('team', 'y')).toBe(1);
    expect(inf.countByIndex('team', 'x', (o) => o.metadata.name === 'a')).toBe(1);
    expect(inf.countByIndex('team', 'x', (o) => o.metadata.name === 'b')).toBe(0);
    expect(() => inf.byIndex('nope', 'x')).toThrow(/no index/);
    expect(() => inf.countByIndex('nope', 'x')).toThrow(/no index/);
  });

  it('keeps a cache equal to the store under concurrent writes, started in the middle of them', async () => {
    let stop = false;
    let ops = 0;
    const writer = async (w: number) => {
      for (let i = 0; !stop; i++) {
        const name = `w${w}-${i % 25}`;
        try {
          const cur = await store.get('ApiClient', name);
          if (i % 3 === 0) await store.delete('ApiClient', name, { preconditions: { resourceVersion: cur.metadata.resourceVersion! } });
          else await store.update({ ...cur, spec: { ...cur.spec, displayName: `v${i}` } });
        } catch (e) {
          if (isStoreError(e, 'NotFound')) await store.create(apiClient(name)).catch(() => undefined);
          else if (!isStoreError(e, 'Conflict')) throw e;
        }
        ops++;
      }
    };
    const writers = [0, 1, 2, 3].map(writer);
    await until(() => ops > 200);
    const inf = informer();
    let events = 0;
    inf.addEventHandler({ onAdd: () => events++, onUpdate: () => events++, onDelete: () => events++ });
    inf.start();
    await inf.waitForSync();
    await until(() => ops > 1500);
    stop = true;
    await Promise.all(writers);
    await until(() => inf.resourceVersion === store.currentRevision());
    expect(versions(inf.list())).toEqual(versions((await store.list('ApiClient')).items));
    expect(events).toBeGreaterThan(100);
  });

  it('when its watch drops and the store has moved past it, gets Gone and relists, deletions included', async () => {
    await store.close();
    store = await openEmbeddedStore({ dir, historyLimit: 10 });
    const faulty = cuttable(store);
    for (const n of ['a', 'b', 'c']) await store.create(apiClient(n));
    const inf = informer({ store: faulty.store, backoffMs: [300, 300] });
    const deleted: string[] = [];
    const added: string[] = [];
    inf.addEventHandler({ onAdd: (o) => added.push(o.metadata.name), onDelete: (o) => deleted.push(o.metadata.name) });
    inf.start();
    await inf.waitForSync();
    await until(() => inf.counters.watches === 1);
    expect(faulty.cutWatches()).toBe(1);
    // While the informer waits out its backoff, more than the history's worth of changes happen.
    await store.delete('ApiClient', 'b');
    await Promise.all(Array.from({ length: 20 }, (_, i) => store.create(apiClient(`n${i}`))));
    await until(() => inf.counters.lists === 2);
    await until(() => inf.resourceVersion === store.currentRevision());
    expect(inf.counters.gone).toBe(1);
    expect(inf.counters.watchErrors).toBe(1);
    expect(deleted).toEqual(['b']);
    expect(added).toHaveLength(3 + 20);
    expect(versions(inf.list())).toEqual(versions((await store.list('ApiClient')).items));
    // And it is watching again.
    await store.create(apiClient('after'));
    await until(() => inf.get('after') !== undefined);
  });

  it('resumes from the last version without relisting when a dropped watch can still be resumed', async () => {
    const faulty = cuttable(store);
    const inf = informer({ store: faulty.store, backoffMs: [20, 20] });
    inf.start();
    await inf.waitForSync();
    await until(() => inf.counters.watches === 1);
    faulty.cutWatches();
    await store.create(apiClient('x'));
    await until(() => inf.get('x') !== undefined);
    expect(inf.counters.lists).toBe(1);
    expect(inf.counters.watches).toBe(2);
    expect(inf.counters.watchErrors).toBe(1);
  });

  it('relists on its period, without telling handlers about unchanged objects', async () => {
    await store.create(apiClient('a'));
    const inf = informer({ relistPeriodMs: 30 });
    let calls = 0;
    inf.addEventHandler({ onAdd: () => calls++, onUpdate: () => calls++ });
    inf.start();
    await inf.waitForSync();
    await until(() => inf.counters.lists >= 3);
    expect(calls).toBe(1);
  });

  it('resyncs: re-delivers cached objects as updates', async () => {
    await store.create(apiClient('a'));
    const inf = informer({ resyncPeriodMs: 20 });
    const updates: [ApiClient, ApiClient][] = [];
    inf.addEventHandler({ onUpdate: (o, n) => updates.push([o, n]) });
    inf.start();
    await inf.waitForSync();
    await until(() => updates.length >= 2);
    expect(updates[0]![0]).toBe(updates[0]![1]);
  });

  it('a throwing handler does not stop the others or the cache', async () => {
    const inf = informer();
    const seen: string[] = [];
    inf.addEventHandler({
      onAdd: () => {
        throw new Error('bug');
      },
    });
    inf.addEventHandler({ onAdd: (o) => seen.push(o.metadata.name) });
    inf.start();
    await inf.waitForSync();
    await store.create(apiClient('a'));
    await store.create(apiClient('b'));
    await until(() => seen.length === 2);
    expect(inf.size).toBe(2);
  });

  it('delivers the cache to a handler added after sync', async () => {
    await store.create(apiClient('a'));
    const inf = informer();
    inf.start();
    await inf.waitForSync();
    const seen: string[] = [];
    inf.addEventHandler({ onAdd: (o) => seen.push(o.metadata.name) });
    await until(() => seen.length === 1);
    await store.create(apiClient('b')); // a later event: by then a second delivery of 'a' would have shown
    await until(() => seen.length === 2);
    expect(seen).toEqual(['a', 'b']);
  });
});
