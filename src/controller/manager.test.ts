import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { tempDir } from '../../test/support/env.ts';
import { alwaysLeader, type LeaderCallbacks, type LeaderElector } from '../lib/leaderElection.ts';
import { silentLogger } from '../lib/logger.ts';
import { openEmbeddedStore, type EmbeddedStore } from '../store/embedded/index.ts';
import { apiClient, executionRequest } from '../store/embedded/testing/fixtures.ts';
import { until } from '../runtime/testing/support.ts';
import { watchOf, type CacheReader, type ObjectKey } from '../runtime/index.ts';
import { startControllerManager, type ManagedController } from './manager.ts';

/** A controller that records its starts and stops, and what the shared cache held when it started. */
function recorder(name: string, log: string[], indexers?: ManagedController['indexers']): ManagedController {
  return {
    name,
    indexers: indexers ?? { ExecutionRequest: {} },
    async start(cache) {
      log.push(`start ${name} (${cache.informerFor('ExecutionRequest').size} cached)`);
      return { stop: async () => void log.push(`stop ${name}`) };
    },
  };
}

/** Requests by their key: what a watch of ApiClients maps a key's change through. */
const byKey = { ExecutionRequest: { byKey: (r: { spec: { apiClient: string } }) => [r.spec.apiClient] } };
/** A change of a key's mode maps to that key's requests. */
const keyWatch = watchOf({
  kind: 'ApiClient',
  map: (change, cache) =>
    change.type === 'updated' && change.old.spec.paymentMode !== change.obj.spec.paymentMode
      ? cache.informerFor('ExecutionRequest').byIndex('byKey', change.obj.metadata.name).map((r) => ({ namespace: r.metadata.namespace!, name: r.metadata.name }))
      : [],
});

/** An elector the test drives: lead() and lose() as a Lease would. */
function manualElector(): LeaderElector & { lead(): Promise<void>; lose(): Promise<void> } {
  let callbacks: LeaderCallbacks | undefined;
  let abort: AbortController | undefined;
  let start: Promise<void> | undefined;
  let end!: () => void;
  const ended = new Promise<void>((r) => (end = r));
  return {
    isLeader: () => abort !== undefined,
    run(cb) {
      callbacks = cb;
      return ended;
    },
    async lead() {
      abort = new AbortController();
      start = Promise.resolve(callbacks!.onStartedLeading(abort.signal));
      await start;
    },
    async lose() {
      abort?.abort();
      abort = undefined;
      await callbacks!.onStoppedLeading();
      await start;
    },
    async stop() {
      await this.lose();
      end();
    },
  };
}

describe('controller manager', () => {
  let store: EmbeddedStore;
  beforeEach(async () => {
    store = await openEmbeddedStore({ dir: tempDir() });
    await store.create(executionRequest('req-1'));
  });
  afterEach(() => store.close());

  it('starts the controllers in order on one synced informer and stops them in reverse', async () => {
    const log: string[] = [];
    const leading: boolean[] = [];
    const manager = startControllerManager({
      store,
      namespace: 'default',
      controllers: [recorder('a', log, { ExecutionRequest: { byAgent: (r) => [r.spec.agentId] } }), recorder('b', log)],
      elector: alwaysLeader(),
      onLeadingChanged: (l) => leading.push(l),
      logger: silentLogger,
    });
    await manager.leading();
    expect(log).toEqual(['start a (1 cached)', 'start b (1 cached)']);
    expect(manager.cache()!.informerFor('ExecutionRequest').byIndex('byAgent', 'agent-1').map((r) => r.metadata.name)).toEqual(['req-1']);
    await manager.stop();
    await manager.done;
    expect(log.slice(2)).toEqual(['stop b', 'stop a']);
    expect(leading).toEqual([true, false]);
    expect(manager.cache()).toBeUndefined();
  });

  it('runs the controllers only while leading, again after a new election', async () => {
    const log: string[] = [];
    const elector = manualElector();
    const manager = startControllerManager({ store, namespace: 'default', controllers: [recorder('a', log)], elector, logger: silentLogger });
    expect(log).toEqual([]);
    await elector.lead();
    await elector.lose();
    await elector.lead();
    expect(log).toEqual(['start a (1 cached)', 'stop a', 'start a (1 cached)']);
    await manager.stop();
    expect(log.at(-1)).toBe('stop a');
  });

  it('refuses two controllers that define the same index of one kind; the same name on two kinds is fine', async () => {
    const same = () => [];
    expect(() =>
      startControllerManager({
        store,
        namespace: 'default',
        controllers: [recorder('a', [], { ApiClient: { same } }), recorder('b', [], { ApiClient: { same } })],
        elector: alwaysLeader(),
        logger: silentLogger,
      }),
    ).toThrow(/controller b: index same of ApiClient/);
    const manager = startControllerManager({
      store,
      namespace: 'default',
      controllers: [recorder('a', [], { ApiClient: { same } }), recorder('b', [], { ExecutionRequest: { same } })],
      elector: alwaysLeader(),
      logger: silentLogger,
    });
    await manager.leading();
    expect(manager.cache()!.informerFor('ExecutionRequest').byIndex('same', 'x')).toEqual([]);
    expect(manager.cache()!.informerFor('ApiClient').byIndex('same', 'x')).toEqual([]);
    await manager.stop();
  });

  it('gives every controller the one informer of a kind: declared kinds synced before the first start, others on demand', async () => {
    await store.create(apiClient('client-a'));
    const seen: { name: string; cache: CacheReader; apiClients: number }[] = [];
    const asker = (name: string, indexers: ManagedController['indexers']): ManagedController => ({
      name,
      indexers,
      async start(cache) {
        seen.push({ name, cache, apiClients: cache.informerFor('ApiClient').size });
        return { stop: async () => undefined };
      },
    });
    const manager = startControllerManager({
      store,
      namespace: 'default',
      controllers: [asker('a', { ApiClient: {} }), asker('b', { ExecutionRequest: {} })],
      elector: alwaysLeader(),
      logger: silentLogger,
    });
    await manager.leading();
    const [a, b] = seen;
    expect(a!.cache.informerFor('ApiClient')).toBe(b!.cache.informerFor('ApiClient'));
    expect(a!.cache.informerFor('ExecutionRequest')).toBe(b!.cache.informerFor('ExecutionRequest'));
    expect(a!.apiClients).toBe(1); // declared by a: synced before a started
    // Not declared by anyone: made when first asked for, then shared too.
    const receipts = b!.cache.informerFor('PaymentReceipt');
    expect(a!.cache.informerFor('PaymentReceipt')).toBe(receipts);
    await receipts.waitForSync();
    await manager.stop();
  });

  it('maps a watched kind’s change to the keys it concerns, through an index, while the controller runs', async () => {
    const client = await store.create(apiClient('client-a'));
    await store.create(executionRequest('req-2'));
    const other = executionRequest('req-other');
    await store.create({ ...other, spec: { ...other.spec, apiClient: 'client-b' } });
    const enqueued: ObjectKey[] = [];
    const watcher: ManagedController = {
      name: 'watcher',
      indexers: byKey,
      watches: [keyWatch],
      async start() {
        return { stop: async () => undefined, enqueue: (key) => void enqueued.push(key) };
      },
    };
    const manager = startControllerManager({ store, namespace: 'default', controllers: [watcher], elector: alwaysLeader(), logger: silentLogger });
    await manager.leading();
    const informer = manager.cache()!.informerFor('ApiClient');
    const changed = await store.update({ ...client, spec: { ...client.spec, paymentMode: 'manual' } });
    await until(() => informer.get('client-a')?.metadata.resourceVersion === changed.metadata.resourceVersion);
    expect(enqueued.map((k) => k.name).sort()).toEqual(['req-1', 'req-2']);

    // A change the map ignores enqueues nothing; after the stop the watch is detached.
    const renamed = await store.update({ ...changed, spec: { ...changed.spec, displayName: 'renamed' } });
    await until(() => informer.get('client-a')?.metadata.resourceVersion === renamed.metadata.resourceVersion);
    expect(enqueued).toHaveLength(2);
    const cache = manager.cache()!;
    await manager.stop();
    expect(() => cache.informerFor('ApiClient')).toThrow(/stopped/);
  });

  it('fails the start of a controller that declares watches but cannot be enqueued to, and stops it', async () => {
    const log: string[] = [];
    const deaf: ManagedController = { ...recorder('deaf', log, byKey), watches: [keyWatch] };
    const manager = startControllerManager({ store, namespace: 'default', controllers: [deaf], elector: alwaysLeader(), logger: silentLogger });
    await expect(manager.done).rejects.toThrow(/deaf declares watches but cannot be enqueued to/);
    expect(log).toEqual(['start deaf (1 cached)', 'stop deaf']);
  });
});
