import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { tempDir } from '../../test/support/env.ts';
import { alwaysLeader, type LeaderCallbacks, type LeaderElector } from '../lib/leaderElection.ts';
import { silentLogger } from '../lib/logger.ts';
import { openEmbeddedStore, type EmbeddedStore } from '../store/embedded/index.ts';
import { executionRequest } from '../store/embedded/testing/fixtures.ts';
import { startControllerManager, type ManagedController } from './manager.ts';

/** A controller that records its starts and stops, and what the shared cache held when it started. */
function recorder(name: string, log: string[], indexers?: ManagedController['indexers']): ManagedController {
  return {
    name,
    ...(indexers && { indexers }),
    async start(informer) {
      log.push(`start ${name} (${informer.size} cached)`);
      return { stop: async () => void log.push(`stop ${name}`) };
    },
  };
}

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
      controllers: [recorder('a', log, { byAgent: (r) => [r.spec.agentId] }), recorder('b', log)],
      elector: alwaysLeader(),
      onLeadingChanged: (l) => leading.push(l),
      logger: silentLogger,
    });
    await manager.leading();
    expect(log).toEqual(['start a (1 cached)', 'start b (1 cached)']);
    expect(manager.informer()!.byIndex('byAgent', 'agent-1').map((r) => r.metadata.name)).toEqual(['req-1']);
    await manager.stop();
    await manager.done;
    expect(log.slice(2)).toEqual(['stop b', 'stop a']);
    expect(leading).toEqual([true, false]);
    expect(manager.informer()).toBeUndefined();
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

  it('refuses two controllers that define the same index', () => {
    const idx = { same: () => [] };
    expect(() =>
      startControllerManager({ store, namespace: 'default', controllers: [recorder('a', [], idx), recorder('b', [], idx)], elector: alwaysLeader(), logger: silentLogger }),
    ).toThrow(/index same/);
  });
});
