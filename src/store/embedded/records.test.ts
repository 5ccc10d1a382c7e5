import { appendFile, mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import type { AnyResource, ExecutionRequest } from '../../api/v1alpha1/index.ts';
import { collect } from '../conformance.ts';
import { openEmbeddedStore, type EmbeddedStore } from './index.ts';
import { applyRecord, decodeRecord, encodeDelete, encodePut, encodeStatus } from './records.ts';
import { apiClient, requestLifecycle } from './testing/fixtures.ts';
import { encodeLine, listSegments } from './wal.ts';

const copy = <T>(v: T): T => structuredClone(v);

describe('records', () => {
  const { created, statuses } = requestLifecycle(7);
  const stored = (status?: ExecutionRequest['status'], rv = '1'): ExecutionRequest => ({
    ...created,
    metadata: { ...created.metadata, uid: 'u', creationTimestamp: '2026-11-21T12:00:00Z', generation: 1, resourceVersion: rv },
    ...(status !== undefined && { status }),
  });

  it('a status write logs the keys that changed, names the others, and replays to the same object', () => {
    const [queued, broadcasting] = statuses as [ExecutionRequest['status'], ExecutionRequest['status']];
    const json = encodeStatus(3, 'ExecutionRequest', 'default', created.metadata.name, queued, broadcasting);
    expect(json).not.toContain(queued!.userOperation!.signature); // logged once, by the Queued write
    expect(json).toContain('"submitAttempts",1');
    expect(json.length).toBeLessThan(JSON.stringify(broadcasting).length / 2);
    const rec = decodeRecord(json)!;
    expect(applyRecord(rec, copy(stored(queued, '2')))).toEqual({ type: 'MODIFIED', object: stored(broadcasting, '3') });
  });

  it('replays the whole lifecycle, from no status to Confirmed, and a status removed', () => {
    let prev = stored(undefined, '1');
    for (const [i, status] of statuses.entries()) {
      const rev = i + 2;
      const rec = decodeRecord(encodeStatus(rev, 'ExecutionRequest', 'default', created.metadata.name, prev.status, status))!;
      const next = applyRecord(rec, copy(prev)).object;
      expect(next).toEqual(stored(status, String(rev)));
      prev = next as ExecutionRequest;
    }
    const removed = decodeRecord(encodeStatus(9, 'ExecutionRequest', 'default', created.metadata.name, prev.status, undefined))!;
    expect(applyRecord(removed, copy(prev)).object).toEqual(stored(undefined, '9'));
  });

  it('a delete names the object; replay gives its last state at the delete revision', () => {
    const rec = decodeRecord(encodeDelete(5, 'ExecutionRequest', 'default', created.metadata.name))!;
    expect(encodeDelete(5, 'ExecutionRequest', 'default', created.metadata.name).length).toBeLessThan(80);
    expect(applyRecord(rec, copy(stored(statuses[2], '4')))).toEqual({ type: 'DELETED', object: stored(statuses[2], '5') });
  });

  it('a put carries the whole object', () => {
    const obj = stored(statuses[0]);
    expect(decodeRecord(encodePut(1, 'ADDED', JSON.stringify(obj)))).toEqual({ rev: 1, op: 'put', type: 'ADDED', object: obj });
  });

  it('a status or delete record for an object that does not exist is an error, not a guess', () => {
    const rec = decodeRecord(encodeDelete(5, 'ApiClient', 'default', 'ghost'))!;
    expect(() => applyRecord(rec, undefined)).toThrow(/ApiClient default\/ghost, which does not exist then/);
    expect(decodeRecord('[5,"Z","ApiClient","default","x"]')).toBeUndefined();
    expect(decodeRecord('[5,"S","Nope","default","x",null]')).toBeUndefined();
  });
});

describe('the store on compact records', () => {
  let dir: string;
  let store: EmbeddedStore;
  beforeEach(async () => {
    dir = await mkdtemp(join(tmpdir(), 'aw-records-'));
    store = await openEmbeddedStore({ dir });
  });
  afterEach(async () => {
    await store.close();
    await rm(dir, { recursive: true, force: true });
  });

  it('after a reopen, objects and the watch history are what was acknowledged, deletes and finalizers included', async () => {
    const acked: AnyResource[] = [];
    for (let i = 0; i < 5; i++) {
      const { created, statuses } = requestLifecycle(i);
      let current: AnyResource = await store.create(created);
      acked.push(current);
      for (const status of statuses) {
        current = await store.updateStatus({ ...current, status } as ExecutionRequest);
        acked.push(current);
      }
    }
    await store.delete('ExecutionRequest', requestLifecycle(0).created.metadata.name);
    const withFinalizer = await store.create(apiClient('f', { labels: { a: 'b' } }));
    const marked = await store.update({ ...withFinalizer, metadata: { ...withFinalizer.metadata, finalizers: ['x/y'] } });
    await store.delete('ApiClient', 'f');
    const live = await store.get('ApiClient', 'f');
    await store.update({ ...live, metadata: { ...live.metadata, finalizers: [] } });
    const before = collect<AnyResource>();
    store.watch('ExecutionRequest', { resourceVersion: '0' }, before.onEvent);
    const history = collect<AnyResource>();
    store.watch('ExecutionRequest', { resourceVersion: '1' }, history.onEvent);
    await history.until(20);
    const lists = async () => ({
      requests: (await store.list('ExecutionRequest')).items,
      clients: (await store.list('ApiClient')).items,
      rev: store.currentRevision(),
    });
    const expected = await lists();
    expect(marked.metadata.finalizers).toEqual(['x/y']);

    await store.close();
    store = await openEmbeddedStore({ dir });
    expect(await lists()).toEqual(expected);
    const replayed = collect<AnyResource>();
    store.watch('ExecutionRequest', { resourceVersion: '1' }, replayed.onEvent);
    await replayed.until(20);
    expect(replayed.events).toEqual(history.events);
    expect(replayed.events.at(-1)).toMatchObject({ type: 'DELETED', object: { metadata: { resourceVersion: '21' } } });
  });

  it('a status record whose object the log never created stops the open and says where', async () => {
    await store.create(apiClient('a'));
    await store.close();
    const [segment] = await listSegments(dir);
    await appendFile(segment!.path, encodeLine(encodeStatus(2, 'ApiClient', 'default', 'ghost', undefined, { rotatedAt: 'x' })));
    await appendFile(segment!.path, encodeLine(encodePut(3, 'ADDED', JSON.stringify({ ...apiClient('b'), metadata: { ...apiClient('b').metadata, resourceVersion: '3' } }))));
    await expect(openEmbeddedStore({ dir })).rejects.toThrow(/wal-0+1\.log: record at revision 2 changes ApiClient default\/ghost/);
    store = await openEmbeddedStore({ dir: join(dir, 'other') }); // for afterEach to close
  });
});
