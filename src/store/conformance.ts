/**
 * The rules of ResourceStore (src/store/types.ts) as one vitest suite, run on every backend:
 * src/store/embedded/conformance.test.ts and src/store/kube/store.test.ts. What only one backend does
 * (the embedded store's dense revision numbers, group commit and durability; the API server's namespaces,
 * which must exist, and its watch cache) is tested in that backend's own files.
 *
 * Written against the interface only: resourceVersions are compared for equality, never as numbers, and
 * every watch that must not miss a write starts from a resourceVersion (the informer's pattern), because "from
 * now" over a network is when the watch is established, not when watch() returns.
 */
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import type { ApiClient } from '../api/v1alpha1/index.ts';
import { apiClient, executionRequest, paymentReceipt } from './embedded/testing/fixtures.ts';
import { StoreError, isStoreError, type ResourceStore, type WatchEvent, type WatchHandle } from './types.ts';

export interface ConformanceContext {
  store: ResourceStore;
  /** Where objects without a namespace go (the store's default); it exists. */
  namespace: string;
  /** Another namespace that exists. */
  otherNamespace: string;
  /**
   * A resourceVersion a watch must answer with Gone. Called after the suite has made at least 20 writes in
   * the test, so a backend with a bounded history can have moved past it.
   */
  tooOldResourceVersion(): Promise<string>;
  /** Releases what setup created (the suite closes the store itself). */
  cleanup?(): Promise<void>;
}

/** Registers the suite; `setup` runs before every test and gives it a fresh, empty store. */
export function describeResourceStoreConformance(name: string, setup: () => Promise<ConformanceContext>): void {
  describe(`ResourceStore conformance: ${name}`, () => {
    let ctx: ConformanceContext;
    let store: ResourceStore;
    let ns: string;
    let other: string;
    const open: WatchHandle[] = [];
    /** A watch the suite stops after the test, so a failed assertion leaves nothing running. */
    const watch: ResourceStore['watch'] = (kind, opts, onEvent) => {
      const w = store.watch(kind, opts, onEvent);
      open.push(w);
      return w;
    };

    beforeEach(async () => {
      ctx = await setup();
      ({ store, namespace: ns, otherNamespace: other } = ctx);
    });
    afterEach(async () => {
      for (const w of open.splice(0)) w.stop();
      await store.close();
      await ctx.cleanup?.();
    });

    const client = (n: string, opts: { labels?: Record<string, string>; namespace?: string } = {}) =>
      apiClient(n, { namespace: ns, ...opts });

    describe('create', () => {
      it('sets uid, creationTimestamp, generation 1 and a resourceVersion; defaults the namespace', async () => {
        const body = client('a');
        delete (body.metadata as { namespace?: string }).namespace;
        const created = await store.create(body);
        expect(created.metadata.namespace).toBe(ns);
        expect(created.metadata.uid).toMatch(/^[0-9a-f-]{36}$/);
        expect(created.metadata.generation).toBe(1);
        expect(created.metadata.creationTimestamp).toMatch(/^\d{4}-\d\d-\d\dT\d\d:\d\d:\d\dZ$/);
        expect(created.metadata.resourceVersion).toMatch(/^.+$/);
        expect(body.metadata.uid).toBeUndefined(); // the request body is not mutated
        expect(await store.get('ApiClient', 'a')).toEqual(created);
      });

      it('applies the schema defaults and drops unknown fields', async () => {
        const body = client('a') as unknown as { spec: Record<string, unknown> };
        delete body.spec.enabled;
        delete body.spec.limits;
        body.spec.surprise = 1;
        const created = await store.create(body as unknown as ApiClient);
        expect(created.spec.enabled).toBe(true);
        expect(created.spec.limits).toEqual({ requestsPerSecond: 50, burst: 100, maxBatchCalls: 20 });
        expect(created.spec).not.toHaveProperty('surprise');
        expect((await store.get('ApiClient', 'a', ns)).spec).not.toHaveProperty('surprise');
      });

      it('fails with AlreadyExists when the name is taken, per kind and namespace', async () => {
        await store.create(client('a'));
        expect(await codeOf(store.create(client('a')))).toBe('AlreadyExists');
        expect(await codeOf(store.create(client('a', { namespace: other })))).toBe('ok');
        expect(await codeOf(store.create(paymentReceipt('a', { namespace: ns })))).toBe('ok');
      });

      it('lets exactly one of many concurrent creates of one name win (create-if-absent)', async () => {
        const results = await Promise.all(Array.from({ length: 20 }, () => codeOf(store.create(paymentReceipt('p', { namespace: ns })))));
        expect(results.filter((r) => r === 'ok')).toHaveLength(1);
        expect(results.filter((r) => r === 'AlreadyExists')).toHaveLength(19);
      });

      it('rejects invalid objects with Invalid and stores nothing', async () => {
        const bad = client('a');
        (bad.spec as { keyHash: string }).keyHash = 'nope';
        expect(await codeOf(store.create(bad))).toBe('Invalid');
        expect(await codeOf(store.create(client('Upper_Case')))).toBe('Invalid');
        expect(await codeOf(store.create(client('a', { labels: { 'x/y/z': 'v' } })))).toBe('Invalid');
        expect(await codeOf(store.create(client('a', { labels: { k: 'has space' } })))).toBe('Invalid');
        expect(await codeOf(store.create({ ...client('a'), kind: 'Pod' } as unknown as ApiClient))).toBe('Invalid');
        const withRv = client('a');
        withRv.metadata.resourceVersion = '5';
        expect(await codeOf(store.create(withRv))).toBe('Invalid');
        expect((await store.list('ApiClient', { namespace: ns })).items).toHaveLength(0);
      });

      it('says which object and which field is invalid', async () => {
        const bad = client('a');
        (bad.spec as { keyHash: string }).keyHash = 'nope';
        const e = await store.create(bad).catch((x: unknown) => x);
        expect(isStoreError(e, 'Invalid')).toBe(true);
        expect((e as Error).message).toContain(`ApiClient ${ns}/a`);
        expect((e as Error).message).toContain('spec.keyHash');
      });
    });

    describe('get and list', () => {
      it('get fails with NotFound and looks in the given namespace', async () => {
        await store.create(client('a', { namespace: other }));
        expect(await codeOf(store.get('ApiClient', 'a'))).toBe('NotFound');
        expect((await store.get('ApiClient', 'a', other)).metadata.namespace).toBe(other);
      });

      it('returns copies the caller may change', async () => {
        await store.create(client('a', { labels: { team: 'x' } }));
        const one = await store.get('ApiClient', 'a', ns);
        one.metadata.labels!.team = 'mutated';
        one.spec.limits.burst = 1;
        const two = await store.get('ApiClient', 'a', ns);
        expect(two.metadata.labels!.team).toBe('x');
        expect(two.spec.limits.burst).toBe(100);
        const listed = (await store.list('ApiClient', { namespace: ns })).items[0]!;
        listed.metadata.labels!.team = 'mutated';
        expect((await store.get('ApiClient', 'a', ns)).metadata.labels!.team).toBe('x');
      });

      it('filters by namespace and label selector', async () => {
        await store.create(client('a', { labels: { team: 'x', tier: '1' } }));
        await store.create(client('b', { labels: { team: 'x', tier: '2' } }));
        await store.create(client('c', { labels: { team: 'x' }, namespace: other }));
        await store.create(executionRequest('a', { namespace: ns }));
        const names = async (opts: Parameters<ResourceStore['list']>[1]) =>
          (await store.list('ApiClient', opts)).items.map((o) => o.metadata.name).sort();
        expect(await names({ namespace: ns })).toEqual(['a', 'b']);
        expect(await names({ namespace: other })).toEqual(['c']);
        expect(await names({ namespace: ns, labelSelector: { team: 'x' } })).toEqual(['a', 'b']);
        expect(await names({ namespace: ns, labelSelector: { team: 'x', tier: '2' } })).toEqual(['b']);
        expect(await names({ namespace: ns, labelSelector: { team: 'y' } })).toEqual([]);
        expect((await store.list('ExecutionRequest', { namespace: ns })).items.map((o) => o.metadata.name)).toEqual(['a']);
      });

      it("returns a resourceVersion from which a watch sees every later change and none before", async () => {
        await store.create(client('before'));
        const { resourceVersion } = await store.list('ApiClient', { namespace: ns });
        const after = await store.create(client('after'));
        const c = collect<ApiClient>();
        watch('ApiClient', { namespace: ns, resourceVersion }, c.onEvent);
        await c.until(1);
        await settle();
        expect(c.events.map(summary)).toEqual([`ADDED after@${after.metadata.resourceVersion}`]);
      });
    });

    describe('update', () => {
      it('bumps generation when spec changes, not for metadata-only changes', async () => {
        const a = await store.create(client('a'));
        const relabelled = await store.update({ ...a, metadata: { ...a.metadata, labels: { k: 'v' } } });
        expect(relabelled.metadata.generation).toBe(1);
        expect(relabelled.metadata.labels).toEqual({ k: 'v' });
        expect(relabelled.metadata.resourceVersion).not.toBe(a.metadata.resourceVersion);
        const changed = await store.update({ ...relabelled, spec: { ...relabelled.spec, enabled: false } });
        expect(changed.metadata.generation).toBe(2);
        expect(changed.metadata.uid).toBe(a.metadata.uid);
        expect(changed.metadata.creationTimestamp).toBe(a.metadata.creationTimestamp);
      });

      it('does not bump generation for a spec equal up to key order', async () => {
        const a = await store.create(client('a'));
        const { limits, ...rest } = a.spec;
        const reordered = await store.update({ ...a, spec: { limits, ...rest }, metadata: { ...a.metadata, annotations: { x: '1' } } });
        expect(reordered.metadata.generation).toBe(1);
      });

      it('fails with Conflict on a stale resourceVersion and NotFound on a missing object', async () => {
        const a = await store.create(client('a'));
        await store.update({ ...a, spec: { ...a.spec, enabled: false } });
        expect(await codeOf(store.update({ ...a, spec: { ...a.spec, displayName: 'x' } }))).toBe('Conflict');
        expect(await codeOf(store.update(client('missing')))).toBe('NotFound');
      });

      it('is unconditional without a resourceVersion', async () => {
        await store.create(client('a'));
        const body = client('a');
        body.spec.displayName = 'blind';
        const updated = await store.update(body);
        expect(updated.spec.displayName).toBe('blind');
        expect(updated.metadata.generation).toBe(2);
      });

      it('ignores status and server-owned metadata in the body', async () => {
        const er = await store.create(executionRequest('e', { namespace: ns }));
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
        const a = await store.create(client('a'));
        const { resourceVersion } = await store.list('ApiClient', { namespace: ns });
        const c = collect<ApiClient>();
        watch('ApiClient', { namespace: ns, resourceVersion }, c.onEvent);
        const same = await store.update(a);
        expect(same.metadata.resourceVersion).toBe(a.metadata.resourceVersion);
        await store.create(client('marker'));
        await c.until(1);
        await settle();
        expect(c.events.map((e) => e.object.metadata.name)).toEqual(['marker']);
      });

      it('validates the result', async () => {
        const a = await store.create(client('a'));
        expect(await codeOf(store.update({ ...a, spec: { ...a.spec, paymentMode: 'free' as 'auto' } }))).toBe('Invalid');
      });
    });

    describe('updateStatus', () => {
      it('changes only status, never generation', async () => {
        const er = await store.create(executionRequest('e', { namespace: ns }));
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
        expect(next.metadata.resourceVersion).not.toBe(er.metadata.resourceVersion);
        expect(await store.get('ExecutionRequest', 'e', ns)).toEqual(next);
      });

      it('fails with Conflict, NotFound and Invalid', async () => {
        const er = await store.create(executionRequest('e', { namespace: ns }));
        await store.updateStatus({ ...er, status: { phase: 'Pending' } });
        expect(await codeOf(store.updateStatus({ ...er, status: { phase: 'Queued' } }))).toBe('Conflict');
        expect(await codeOf(store.updateStatus(executionRequest('missing', { namespace: ns })))).toBe('NotFound');
        const cur = await store.get('ExecutionRequest', 'e', ns);
        expect(await codeOf(store.updateStatus({ ...cur, status: { phase: 'Nope' as 'Queued' } }))).toBe('Invalid');
      });

      it('of two concurrent writers from the same version, one gets Conflict', async () => {
        const er = await store.create(executionRequest('e', { namespace: ns }));
        const results = await Promise.all([
          codeOf(store.updateStatus({ ...er, status: { phase: 'Queued' } })),
          codeOf(store.updateStatus({ ...er, status: { phase: 'Failed' } })),
        ]);
        expect(results.sort()).toEqual(['Conflict', 'ok']);
      });

      it('is unconditional without a resourceVersion', async () => {
        await store.create(executionRequest('e', { namespace: ns }));
        const next = await store.updateStatus({ ...executionRequest('e', { namespace: ns }), status: { phase: 'Queued' } });
        expect(next.status?.phase).toBe('Queued');
      });
    });

    describe('delete', () => {
      it('deletes, with NotFound and a resourceVersion precondition', async () => {
        const a = await store.create(client('a'));
        expect(await codeOf(store.delete('ApiClient', 'missing', { namespace: ns }))).toBe('NotFound');
        const changed = await store.update({ ...a, spec: { ...a.spec, enabled: false } });
        expect(await codeOf(store.delete('ApiClient', 'a', { namespace: ns, preconditions: { resourceVersion: a.metadata.resourceVersion! } }))).toBe('Conflict');
        await store.delete('ApiClient', 'a', { namespace: ns, preconditions: { resourceVersion: changed.metadata.resourceVersion! } });
        expect(await codeOf(store.get('ApiClient', 'a', ns))).toBe('NotFound');
        expect(await codeOf(store.delete('ApiClient', 'a', { namespace: ns }))).toBe('NotFound');
        expect(await codeOf(store.create(client('a')))).toBe('ok');
      });

      it('without a namespace deletes in the default one', async () => {
        await store.create(client('a'));
        await store.create(client('a', { namespace: other }));
        await store.delete('ApiClient', 'a');
        expect(await codeOf(store.get('ApiClient', 'a'))).toBe('NotFound');
        expect(await codeOf(store.get('ApiClient', 'a', other))).toBe('ok');
      });

      it('with finalizers only marks the object; removing the last finalizer deletes it', async () => {
        const body = client('a');
        body.metadata.finalizers = ['agentwallet.dev/archive'];
        const a = await store.create(body);
        await store.delete('ApiClient', 'a', { namespace: ns });
        const marked = await store.get('ApiClient', 'a', ns);
        expect(marked.metadata.deletionTimestamp).toBeDefined();
        expect(marked.metadata.generation).toBe(2);
        const more = { ...marked, metadata: { ...marked.metadata, finalizers: ['agentwallet.dev/archive', 'agentwallet.dev/y'] } };
        expect(await codeOf(store.update(more))).toBe('Invalid');
        await store.update({ ...marked, metadata: { ...marked.metadata, finalizers: [] } });
        expect(await codeOf(store.get('ApiClient', 'a', ns))).toBe('NotFound');
        expect(a.metadata.deletionTimestamp).toBeUndefined();
      });
    });

    describe('watch', () => {
      it('delivers ADDED, MODIFIED, DELETED in order with the written versions, a copy per watcher', async () => {
        const { resourceVersion } = await store.list('ApiClient', { namespace: ns });
        const c1 = collect<ApiClient>();
        const c2 = collect<ApiClient>();
        const w1 = watch('ApiClient', { namespace: ns, resourceVersion }, c1.onEvent);
        watch('ApiClient', { namespace: ns, resourceVersion }, c2.onEvent);
        const a = await store.create(client('a'));
        const b = await store.update({ ...a, spec: { ...a.spec, enabled: false } });
        await store.create(executionRequest('not-watched', { namespace: ns }));
        await store.create(client('elsewhere', { namespace: other }));
        await store.delete('ApiClient', 'a', { namespace: ns });
        await c1.until(3);
        await c2.until(3);
        await settle();
        const rv = (o: { metadata: { resourceVersion?: string } }) => o.metadata.resourceVersion;
        expect(c1.events.map(summary)).toEqual([`ADDED a@${rv(a)}`, `MODIFIED a@${rv(b)}`, expect.stringMatching(/^DELETED a@/)]);
        expect(c2.events.map(summary)).toEqual(c1.events.map(summary));
        expect(c1.events[0]!.object).not.toBe(c2.events[0]!.object);
        expect(c1.events[0]!.object).toEqual(a);
        expect(c2.events[0]!.object).toEqual(a);
        w1.stop();
        await expect(w1.done).resolves.toBeUndefined();
      });

      it('never calls the handler inside watch()', async () => {
        await store.create(client('a'));
        const c = collect<ApiClient>();
        watch('ApiClient', { namespace: ns, resourceVersion: '0' }, c.onEvent);
        expect(c.events).toHaveLength(0);
        await c.until(1);
      });

      it('from "0" starts with an ADDED for each current object, then changes', async () => {
        const a = await store.create(client('a', { labels: { team: 'x' } }));
        const a2 = await store.update({ ...a, spec: { ...a.spec, enabled: false } });
        await store.create(client('b'));
        await store.delete('ApiClient', 'b', { namespace: ns });
        const c0 = await store.create(client('c', { labels: { team: 'x' } }));
        const c = collect<ApiClient>();
        watch('ApiClient', { namespace: ns, resourceVersion: '0', labelSelector: { team: 'x' } }, c.onEvent);
        await c.until(2);
        const d = await store.create(client('d', { labels: { team: 'x' } }));
        await c.until(3);
        await settle();
        const byName = c.events.slice(0, 2).map(summary).sort();
        expect(byName).toEqual([`ADDED a@${a2.metadata.resourceVersion}`, `ADDED c@${c0.metadata.resourceVersion}`]);
        expect(summary(c.events[2]!)).toBe(`ADDED d@${d.metadata.resourceVersion}`);
      });

      it('from a resourceVersion replays what came after it, then continues live', async () => {
        await store.create(client('a'));
        const { resourceVersion } = await store.list('ApiClient', { namespace: ns });
        const b = await store.create(client('b'));
        await store.delete('ApiClient', 'a', { namespace: ns });
        const c = collect<ApiClient>();
        watch('ApiClient', { namespace: ns, resourceVersion }, c.onEvent);
        await c.until(2);
        const c2 = await store.create(client('c'));
        await c.until(3);
        await settle();
        expect(c.events.map(summary)).toEqual([
          `ADDED b@${b.metadata.resourceVersion}`,
          expect.stringMatching(/^DELETED a@/),
          `ADDED c@${c2.metadata.resourceVersion}`,
        ]);
      });

      it('without a resourceVersion starts from now', async () => {
        await store.create(client('a'));
        const c = collect<ApiClient>();
        watch('ApiClient', { namespace: ns }, c.onEvent);
        // "Now" is when the watch is established: over a network, a moment after watch() returns.
        await new Promise((r) => setTimeout(r, 500));
        const b = await store.create(client('b'));
        await c.until(1);
        await settle();
        expect(c.events.map(summary)).toEqual([`ADDED b@${b.metadata.resourceVersion}`]);
      });

      it('ends with Gone from a version the store no longer has', async () => {
        for (let i = 0; i < 20; i++) await store.create(client(`o${i}`));
        const gone = watch('ApiClient', { namespace: ns, resourceVersion: await ctx.tooOldResourceVersion() }, () => undefined);
        await expect(gone.done).rejects.toMatchObject({ code: 'Gone' });
        expect(await gone.done.catch((e: unknown) => e)).toBeInstanceOf(StoreError);
      });

      it('turns label changes into ADDED/DELETED for a selector, and filters by namespace', async () => {
        const { resourceVersion } = await store.list('ApiClient', { namespace: ns });
        const c = collect<ApiClient>();
        watch('ApiClient', { labelSelector: { team: 'x' }, namespace: ns, resourceVersion }, c.onEvent);
        const a = await store.create(client('a'));
        await store.create(client('o', { labels: { team: 'x' }, namespace: other }));
        const a2 = await store.update({ ...a, metadata: { ...a.metadata, labels: { team: 'x' } } });
        const a3 = await store.update({ ...a2, spec: { ...a2.spec, enabled: false } });
        const a4 = await store.update({ ...a3, metadata: { ...a3.metadata, labels: { team: 'y' } } });
        await store.update({ ...a4, spec: { ...a4.spec, enabled: true } });
        await c.until(3);
        await settle();
        expect(c.events.map((e) => e.type)).toEqual(['ADDED', 'MODIFIED', 'DELETED']);
        expect(c.events.map((e) => e.object.metadata.resourceVersion)).toEqual(
          [a2, a3, a4].map((o) => o.metadata.resourceVersion),
        );
      });

      it('ends with Unavailable when its handler throws', async () => {
        const { resourceVersion } = await store.list('ApiClient', { namespace: ns });
        const w = watch('ApiClient', { namespace: ns, resourceVersion }, () => {
          throw new Error('bug');
        });
        await store.create(client('a'));
        await expect(w.done).rejects.toMatchObject({ code: 'Unavailable' });
      });

      it('ends with Unavailable on close, and every later call fails with Unavailable', async () => {
        const { resourceVersion } = await store.list('ApiClient', { namespace: ns });
        const w = watch('ApiClient', { namespace: ns, resourceVersion }, () => undefined);
        await store.close();
        await expect(w.done).rejects.toMatchObject({ code: 'Unavailable' });
        expect(await codeOf(store.get('ApiClient', 'a'))).toBe('Unavailable');
        expect(await codeOf(store.create(client('a')))).toBe('Unavailable');
      });
    });

    describe('health', () => {
      it('is writable while writes succeed, and after close is not, for good', async () => {
        expect(store.health()).toEqual({ writable: true });
        await store.create(client('a'));
        expect(store.health()).toEqual({ writable: true });
        await store.close();
        expect(store.health()).toMatchObject({ writable: false, recovering: false, reason: expect.any(String) });
      });
    });
  });
}

// ---- helpers, also for the backends' own tests ----

/** The StoreError code a call fails with, or 'ok'. */
export async function codeOf(p: Promise<unknown>): Promise<string> {
  try {
    await p;
  } catch (e) {
    if (e instanceof StoreError) return e.code;
    throw e;
  }
  return 'ok';
}

/** Collects a watch's events; `until(n)` waits (up to 10 s) for the n-th. */
export function collect<T>() {
  const events: WatchEvent<T>[] = [];
  const waiters: { n: number; resolve: () => void }[] = [];
  const onEvent = (e: WatchEvent<T>) => {
    events.push(e);
    for (const w of waiters.filter((x) => events.length >= x.n)) w.resolve();
  };
  const until = (n: number) =>
    events.length >= n
      ? Promise.resolve()
      : new Promise<void>((resolve, reject) => {
          const timer = setTimeout(() => reject(new Error(`waited 10 s for ${n} events; got ${events.length}`)), 10_000);
          waiters.push({ n, resolve: () => (clearTimeout(timer), resolve()) });
        });
  return { events, onEvent, until };
}

/** Long enough for an event that should not come to show up (a round trip on loopback is ~3 ms). */
const settle = () => new Promise((r) => setTimeout(r, 200));

export const summary = (e: WatchEvent<{ metadata: { name: string; resourceVersion?: string } }>) =>
  `${e.type} ${e.object.metadata.name}@${e.object.metadata.resourceVersion}`;
