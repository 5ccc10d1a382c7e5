import { mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import type { ApiClient } from '../../api/v1alpha1/index.ts';
import { StoreError, isStoreError, type WatchEvent } from '../types.ts';
import { openEmbeddedStore, type EmbeddedStore } from './index.ts';
import { apiClient, executionRequest, paymentReceipt } from './testing/fixtures.ts';

let dir: string;
let store: EmbeddedStore;

beforeEach(async () => {
  dir = await mkdtemp(join(tmpdir(), 'aw-store-'));
  store = await openEmbeddedStore({ dir });
});
afterEach(async () => {
  await store.close();
  await rm(dir, { recursive: true, force: true });
});

async function codeOf(p: Promise<unknown>): Promise<string> {
  try {
    await p;
  } catch (e) {
    if (e instanceof StoreError) return e.code;
    throw e;
  }
  return 'ok';
}

/** Collects a watch's events; `until(n)` waits for the n-th. */
function collect<T>(events: WatchEvent<T>[] = []) {
  const waiters: { n: number; resolve: () => void }[] = [];
  const onEvent = (e: WatchEvent<T>) => {
    events.push(e);
    for (const w of waiters.filter((x) => events.length >= x.n)) w.resolve();
  };
  const until = (n: number) =>
    events.length >= n ? Promise.resolve() : new Promise<void>((resolve) => waiters.push({ n, resolve }));
  return { events, onEvent, until };
}

const summary = (e: WatchEvent<{ metadata: { name: string; resourceVersion?: string } }>) =>
  `${e.type} ${e.object.metadata.name}@${e.object.metadata.resourceVersion}`;

describe('create', () => {
  it('sets uid, creationTimestamp, generation 1, resourceVersion and the default namespace', async () => {
    const body = apiClient('a');
    delete (body.metadata as { namespace?: string }).namespace;
    const created = await store.create(body);
    expect(created.metadata.namespace).toBe('default');
    expect(created.metadata.uid).toMatch(/^[0-9a-f-]{36}$/);
    expect(created.metadata.generation).toBe(1);
    expect(created.metadata.creationTimestamp).toMatch(/^\d{4}-\d\d-\d\dT\d\d:\d\d:\d\dZ$/);
    expect(created.metadata.resourceVersion).toBe(store.currentRevision());
    expect(body.metadata.uid).toBeUndefined(); // the request body is not mutated
  });

  it('applies the schema defaults and drops unknown fields', async () => {
    const body = apiClient('a') as unknown as { spec: Record<string, unknown> };
    delete body.spec.enabled;
    delete body.spec.limits;
    body.spec.surprise = 1;
    const created = await store.create(body as unknown as ApiClient);
    expect(created.spec.enabled).toBe(true);
    expect(created.spec.limits).toEqual({ requestsPerSecond: 50, burst: 100, maxBatchCalls: 20 });
    expect(created.spec).not.toHaveProperty('surprise');
  });

  it('fails with AlreadyExists when the name is taken, per kind and namespace', async () => {
    await store.create(apiClient('a'));
    expect(await codeOf(store.create(apiClient('a')))).toBe('AlreadyExists');
    expect(await codeOf(store.create(apiClient('a', { namespace: 'other' })))).toBe('ok');
    expect(await codeOf(store.create(paymentReceipt('a')))).toBe('ok');
  });

  it('lets exactly one of many concurrent creates of one name win', async () => {
    const results = await Promise.all(Array.from({ length: 20 }, () => codeOf(store.create(paymentReceipt('p')))));
    expect(results.filter((r) => r === 'ok')).toHaveLength(1);
    expect(results.filter((r) => r === 'AlreadyExists')).toHaveLength(19);
  });

  it('rejects invalid objects with Invalid', async () => {
    const bad = apiClient('a');
    (bad.spec as { keyHash: string }).keyHash = 'nope';
    expect(await codeOf(store.create(bad))).toBe('Invalid');
    expect(await codeOf(store.create(apiClient('Upper_Case')))).toBe('Invalid');
    expect(await codeOf(store.create(apiClient('a', { namespace: 'a.b' })))).toBe('Invalid');
    expect(await codeOf(store.create(apiClient('a', { labels: { 'x/y/z': 'v' } })))).toBe('Invalid');
    expect(await codeOf(store.create(apiClient('a', { labels: { k: 'has space' } })))).toBe('Invalid');
    expect(await codeOf(store.create({ ...apiClient('a'), kind: 'Pod' } as unknown as ApiClient))).toBe('Invalid');
    const withRv = apiClient('a');
    withRv.metadata.resourceVersion = '5';
    expect(await codeOf(store.create(withRv))).toBe('Invalid');
    expect((await store.list('ApiClient')).items).toHaveLength(0);
  });

  it('gives a message that names the object and the field', async () => {
    const bad = apiClient('a');
    (bad.spec as { keyHash: string }).keyHash = 'nope';
    const e = await store.create(bad).catch((x: unknown) => x);
    expect(isStoreError(e, 'Invalid')).toBe(true);
    expect((e as Error).message).toContain('ApiClient default/a');
    expect((e as Error).message).toContain('spec.keyHash');
  });
});

describe('get and list', () => {
  it('get fails with NotFound, looks in the given namespace', async () => {
    await store.create(apiClient('a', { namespace: 'ns1' }));
    expect(await codeOf(store.get('ApiClient', 'a'))).toBe('NotFound');
    expect((await store.get('ApiClient', 'a', 'ns1')).metadata.namespace).toBe('ns1');
  });

  it('returns deep copies', async () => {
    await store.create(apiClient('a', { labels: { team: 'x' } }));
    const one = await store.get('ApiClient', 'a');
    one.metadata.labels!.team = 'mutated';
    one.spec.limits.burst = 1;
    const two = await store.get('ApiClient', 'a');
    expect(two.metadata.labels!.team).toBe('x');
    expect(two.spec.limits.burst).toBe(100);
    const listed = (await store.list('ApiClient')).items[0]!;
    listed.metadata.labels!.team = 'mutated';
    expect((await store.get('ApiClient', 'a')).metadata.labels!.team).toBe('x');
  });

  it('filters by namespace and label selector and returns the current revision', async () => {
    await store.create(apiClient('a', { labels: { team: 'x', tier: '1' } }));
    await store.create(apiClient('b', { labels: { team: 'x', tier: '2' } }));
    await store.create(apiClient('c', { labels: { team: 'y' }, namespace: 'ns1' }));
    await store.create(executionRequest('a'));
    const names = async (opts: Parameters<EmbeddedStore['list']>[1]) =>
      (await store.list('ApiClient', opts)).items.map((o) => o.metadata.name).sort();
    expect(await names({})).toEqual(['a', 'b', 'c']);
    expect(await names({ namespace: 'default' })).toEqual(['a', 'b']);
    expect(await names({ labelSelector: { team: 'x' } })).toEqual(['a', 'b']);
    expect(await names({ labelSelector: { team: 'x', tier: '2' } })).toEqual(['b']);
    expect(await names({ labelSelector: { team: 'y' }, namespace: 'default' })).toEqual([]);
    const list = await store.list('ApiClient');
    expect(list.resourceVersion).toBe(store.currentRevision());
    expect(list.resourceVersion).toBe('4');
  });
});

describe('update', () => {
  it('bumps generation when spec changes, not for metadata-only changes', async () => {
    const a = await store.create(apiClient('a'));
    const relabelled = await store.update({ ...a, metadata: { ...a.metadata, labels: { k: 'v' } } });
    expect(relabelled.metadata.generation).toBe(1);
    expect(relabelled.metadata.labels).toEqual({ k: 'v' });
    expect(Number(relabelled.metadata.resourceVersion)).toBeGreaterThan(Number(a.metadata.resourceVersion));
    const changed = await store.update({ ...relabelled, spec: { ...relabelled.spec, enabled: false } });
    expect(changed.metadata.generation).toBe(2);
    expect(changed.metadata.uid).toBe(a.metadata.uid);
    expect(changed.metadata.creationTimestamp).toBe(a.metadata.creationTimestamp);
  });

  it('does not bump generation for a spec equal up to key order', async () => {
    const a = await store.create(apiClient('a'));
    const { limits, ...rest } = a.spec;
    const reordered = await store.update({ ...a, spec: { limits, ...rest }, metadata: { ...a.metadata, annotations: { x: '1' } } });
    expect(reordered.metadata.generation).toBe(1);
  });

  it('fails with Conflict on a stale resourceVersion and NotFound on a missing object', async () => {
    const a = await store.create(apiClient('a'));
    await store.update({ ...a, spec: { ...a.spec, enabled: false } });
    expect(await codeOf(store.update({ ...a, spec: { ...a.spec, displayName: 'x' } }))).toBe('Conflict');
    expect(await codeOf(store.update(apiClient('missing')))).toBe('NotFound');
  });

  it('is unconditional without a resourceVersion', async () => {
    await store.create(apiClient('a'));
    const body = apiClient('a');
    body.spec.displayName = 'blind';
    const updated = await store.update(body);
    expect(updated.spec.displayName).toBe('blind');
    expect(updated.metadata.generation).toBe(2);
  });

  it('ignores status and server-owned metadata in the body', async () => {
    const er = await store.create(executionRequest('e'));
    const withStatus = await store.updateStatus({ ...er, status: { phase: 'Queued' } });
    const updated = await store.update({
      ...withStatus,
      metadata: { ...withStatus.metadata, uid: 'forged', generation: 99, creationTimestamp: '2000-01-01T00:00:00Z' },
      status: { phase: 'Confirmed' },
    });
    expect(updated.status?.phase).toBe('Queued');
    expect(updated.metadata.uid).toBe(er.metadata.uid);
    expect(updated.metadata.generation).toBe(1);
    expect(updated.metadata.creationTimestamp).toBe(er.metadata.creationTimestamp);
  });

  it('a no-op update writes nothing and keeps the resourceVersion', async () => {
    const a = await store.create(apiClient('a'));
    const same = await store.update(a);
    expect(same.metadata.resourceVersion).toBe(a.metadata.resourceVersion);
    expect(store.currentRevision()).toBe(a.metadata.resourceVersion);
  });

  it('validates the result', async () => {
    const a = await store.create(apiClient('a'));
    expect(await codeOf(store.update({ ...a, spec: { ...a.spec, paymentMode: 'free' as 'auto' } }))).toBe('Invalid');
  });
});

describe('updateStatus', () => {
  it('changes only status, never generation', async () => {
    const er = await store.create(executionRequest('e'));
    const next = await store.updateStatus({
      ...er,
      metadata: { ...er.metadata, labels: { sneaky: 'yes' } },
      spec: { ...er.spec, agentId: 'other' },
      status: { phase: 'Pending', observedGeneration: 1 },
    });
    expect(next.status).toEqual({ phase: 'Pending', observedGeneration: 1 });
    expect(next.spec.agentId).toBe('agent-1');
    expect(next.metadata.labels).toBeUndefined();
    expect(next.metadata.generation).toBe(1);
    expect(Number(next.metadata.resourceVersion)).toBeGreaterThan(Number(er.metadata.resourceVersion));
  });

  it('fails with Conflict, NotFound and Invalid', async () => {
    const er = await store.create(executionRequest('e'));
    await store.updateStatus({ ...er, status: { phase: 'Pending' } });
    expect(await codeOf(store.updateStatus({ ...er, status: { phase: 'Queued' } }))).toBe('Conflict');
    expect(await codeOf(store.updateStatus(executionRequest('missing')))).toBe('NotFound');
    const cur = await store.get('ExecutionRequest', 'e');
    expect(await codeOf(store.updateStatus({ ...cur, status: { phase: 'Nope' as 'Queued' } }))).toBe('Invalid');
  });

  it('of two concurrent writers from the same version, one gets Conflict', async () => {
    const er = await store.create(executionRequest('e'));
    const results = await Promise.all([
      codeOf(store.updateStatus({ ...er, status: { phase: 'Queued' } })),
      codeOf(store.updateStatus({ ...er, status: { phase: 'Failed' } })),
    ]);
    expect(results.sort()).toEqual(['Conflict', 'ok']);
  });
});

describe('delete', () => {
  it('deletes, with NotFound and a resourceVersion precondition', async () => {
    const a = await store.create(apiClient('a'));
    expect(await codeOf(store.delete('ApiClient', 'missing'))).toBe('NotFound');
    expect(await codeOf(store.delete('ApiClient', 'a', { preconditions: { resourceVersion: '999' } }))).toBe('Conflict');
    await store.delete('ApiClient', 'a', { preconditions: { resourceVersion: a.metadata.resourceVersion! } });
    expect(await codeOf(store.get('ApiClient', 'a'))).toBe('NotFound');
    expect(await codeOf(store.delete('ApiClient', 'a'))).toBe('NotFound');
    expect(await codeOf(store.create(apiClient('a')))).toBe('ok');
  });

  it('with finalizers only marks the object; removing the last finalizer deletes it', async () => {
    const body = apiClient('a');
    body.metadata.finalizers = ['x/archive'];
    const a = await store.create(body);
    await store.delete('ApiClient', 'a');
    const marked = await store.get('ApiClient', 'a');
    expect(marked.metadata.deletionTimestamp).toBeDefined();
    expect(marked.metadata.generation).toBe(2);
    expect(await codeOf(store.update({ ...marked, metadata: { ...marked.metadata, finalizers: ['x/archive', 'y'] } }))).toBe('Invalid');
    await store.update({ ...marked, metadata: { ...marked.metadata, finalizers: [] } });
    expect(await codeOf(store.get('ApiClient', 'a'))).toBe('NotFound');
    expect(a.metadata.deletionTimestamp).toBeUndefined();
  });
});

describe('revisions', () => {
  it('increase by one per write across kinds, are strings', async () => {
    const a = await store.create(apiClient('a'));
    const e = await store.create(executionRequest('e'));
    const s = await store.updateStatus({ ...e, status: { phase: 'Pending' } });
    expect([a, e, s].map((o) => o.metadata.resourceVersion)).toEqual(['1', '2', '3']);
  });
});

describe('watch', () => {
  it('delivers ADDED, MODIFIED, DELETED in revision order, with deep copies per watcher', async () => {
    const c1 = collect<ApiClient>();
    const c2 = collect<ApiClient>();
    const w1 = store.watch('ApiClient', {}, c1.onEvent);
    const w2 = store.watch('ApiClient', {}, c2.onEvent);
    const a = await store.create(apiClient('a'));
    const b = await store.update({ ...a, spec: { ...a.spec, enabled: false } });
    await store.create(executionRequest('not-watched'));
    await store.delete('ApiClient', 'a');
    await c1.until(3);
    await c2.until(3);
    expect(c1.events.map(summary)).toEqual(['ADDED a@1', `MODIFIED a@${b.metadata.resourceVersion}`, 'DELETED a@4']);
    expect(c1.events[0]!.object).not.toBe(c2.events[0]!.object);
    expect(c1.events[0]!.object).toEqual(c2.events[0]!.object);
    w1.stop();
    w2.stop();
    await expect(w1.done).resolves.toBeUndefined();
  });

  it('never calls the handler inside the call that caused the event', async () => {
    const c = collect<ApiClient>();
    store.watch('ApiClient', {}, c.onEvent);
    await store.create(apiClient('a'));
    expect(c.events).toHaveLength(0); // the create resolved, the event is still on its way
    await c.until(1);
    const replay = collect<ApiClient>();
    store.watch('ApiClient', { resourceVersion: '0' }, replay.onEvent);
    expect(replay.events).toHaveLength(0);
    await replay.until(1);
  });

  it('from "0" starts with an ADDED for each current object, as the API server does', async () => {
    const a = await store.create(apiClient('a', { labels: { team: 'x' } }));
    await store.update({ ...a, spec: { ...a.spec, enabled: false } });
    await store.create(apiClient('b'));
    await store.delete('ApiClient', 'b');
    await store.create(apiClient('c', { labels: { team: 'x' } }));
    const c = collect<ApiClient>();
    store.watch('ApiClient', { resourceVersion: '0', labelSelector: { team: 'x' } }, c.onEvent);
    await store.create(apiClient('d', { labels: { team: 'x' } }));
    await c.until(3);
    expect(c.events.map(summary)).toEqual(['ADDED a@2', 'ADDED c@5', 'ADDED d@6']);
  });

  it('from a resourceVersion replays what came after it, then continues live', async () => {
    await store.create(apiClient('a'));
    const { resourceVersion } = await store.list('ApiClient');
    await store.create(apiClient('b'));
    await store.delete('ApiClient', 'a');
    const c = collect<ApiClient>();
    store.watch('ApiClient', { resourceVersion }, c.onEvent);
    await store.create(apiClient('c'));
    await c.until(3);
    expect(c.events.map(summary)).toEqual(['ADDED b@2', 'DELETED a@3', 'ADDED c@4']);
  });

  it('without a resourceVersion starts from now', async () => {
    await store.create(apiClient('a'));
    const c = collect<ApiClient>();
    store.watch('ApiClient', {}, c.onEvent);
    await store.create(apiClient('b'));
    await c.until(1);
    await new Promise((r) => setTimeout(r, 20));
    expect(c.events.map(summary)).toEqual(['ADDED b@2']);
  });

  it('ends with Gone from a version older than the history', async () => {
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

  it('filters by namespace and turns label changes into ADDED/DELETED for a selector', async () => {
    const c = collect<ApiClient>();
    store.watch('ApiClient', { labelSelector: { team: 'x' }, namespace: 'default' }, c.onEvent);
    const a = await store.create(apiClient('a'));
    await store.create(apiClient('o', { labels: { team: 'x' }, namespace: 'other' }));
    const a2 = await store.update({ ...a, metadata: { ...a.metadata, labels: { team: 'x' } } });
    const a3 = await store.update({ ...a2, spec: { ...a2.spec, enabled: false } });
    const a4 = await store.update({ ...a3, metadata: { ...a3.metadata, labels: { team: 'y' } } });
    await store.update({ ...a4, spec: { ...a4.spec, enabled: true } });
    await c.until(3);
    await new Promise((r) => setTimeout(r, 20));
    expect(c.events.map((e) => e.type)).toEqual(['ADDED', 'MODIFIED', 'DELETED']);
    expect(c.events.map((e) => e.object.metadata.resourceVersion)).toEqual(['3', '4', '5']);
  });

  it('ends with Unavailable when its handler throws, and on close', async () => {
    const w = store.watch('ApiClient', {}, () => {
      throw new Error('bug');
    });
    await store.create(apiClient('a'));
    await expect(w.done).rejects.toMatchObject({ code: 'Unavailable' });
    const w2 = store.watch('ApiClient', {}, () => undefined);
    await store.close();
    await expect(w2.done).rejects.toMatchObject({ code: 'Unavailable' });
    store = await openEmbeddedStore({ dir });
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

  it('compacts on its own once the log passes the threshold', async () => {
    await store.close();
    store = await openEmbeddedStore({ dir, compactAfterBytes: 20_000 });
    for (let i = 0; i < 10; i++) await Promise.all(Array.from({ length: 20 }, (_, j) => store.create(apiClient(`x${i}-${j}`))));
    await new Promise((r) => setTimeout(r, 100));
    expect(store.stats().snapshots).toBeGreaterThan(0);
    await store.close();
    store = await openEmbeddedStore({ dir });
    expect((await store.list('ApiClient')).items).toHaveLength(200);
  });

  it('refuses every call after close with Unavailable', async () => {
    await store.close();
    expect(await codeOf(store.get('ApiClient', 'a'))).toBe('Unavailable');
    expect(await codeOf(store.create(apiClient('a')))).toBe('Unavailable');
    store = await openEmbeddedStore({ dir });
  });
});
