import type { Kind } from '../api/v1alpha1/index.ts';
import type { LeaderElector } from '../lib/leaderElection.ts';
import type { Logger } from '../lib/logger.ts';
import { attachWatch, InformerCache, mergeIndexers, type CacheReader, type IndexersByKind, type ObjectKey, type Watch } from '../runtime/index.ts';
import type { ResourceStore } from '../store/types.ts';

/** One controller the manager runs: what it reads from the shared caches, what it watches, how it starts on them. */
export interface ManagedController {
  readonly name: string;
  /**
   * The kinds it reads, each with the indexes it needs, added to that kind's shared informer (index names must not
   * collide within a kind). A kind listed with no index (`{}`) is still synced before the controller starts.
   */
  readonly indexers?: IndexersByKind;
  /**
   * Changes of other kinds that concern it, each mapped to the keys it reconciles (controller-runtime's `Watches`
   * with `EnqueueRequestsFromMapFunc`): attached once it started, detached before it stops. Needs `enqueue`.
   */
  readonly watches?: readonly Watch[];
  /** Starts on the manager's caches (every kind it declared is synced by then); resolves once it reconciles. */
  start(cache: CacheReader): Promise<RunningController>;
}

export interface RunningController {
  stop(): Promise<void>;
  /** Queues one of its keys for a reconcile: what a watch's mapped change becomes. */
  enqueue?(key: ObjectKey): void;
}

export interface ControllerManagerOptions {
  store: ResourceStore;
  namespace: string;
  /** Started in this order, stopped in the reverse one (a controller may depend on one started before it). */
  controllers: readonly ManagedController[];
  /** Who may reconcile: `alwaysLeader()` in one process, a Lease in a cluster. */
  elector: LeaderElector;
  /** Told when this process starts and stops leading (after the controllers started, or stopped). */
  onLeadingChanged?(leading: boolean): void;
  logger: Logger;
}

export interface ControllerManager {
  /** Resolves the first time this process leads with every controller started. */
  leading(): Promise<void>;
  /** The shared caches while leading (for diagnostics and tests), else undefined. */
  cache(): CacheReader | undefined;
  /** Resolves when the elector's run ends (after stop()); rejects if a start failed. */
  readonly done: Promise<void>;
  /** Stops the controllers, releases leadership. Idempotent. */
  stop(): Promise<void>;
}

/**
 * controller-runtime's manager: the controllers of the service and the caches they share, run only while this
 * process leads. Leading creates one informer per kind the controllers declared (list + watch, with every
 * controller's indexes of that kind), waits for them to sync, then starts the controllers in order, each with its
 * watches; losing or giving up leadership stops them in reverse order (reconciles in flight finish; their writes
 * carry resourceVersion preconditions), then the informers. Both ways to run use it: the embedded role with
 * `alwaysLeader()`, the cluster's controller role with a Lease, so neither composes controllers by hand.
 */
export function startControllerManager(opts: ControllerManagerOptions): ControllerManager {
  const indexers = mergeIndexers(opts.controllers.map((c) => ({ owner: `controller ${c.name}`, indexers: c.indexers })));
  // Synced before any controller starts: the kinds read, and the kinds watched.
  const kinds = new Set<Kind>([...(Object.keys(indexers) as Kind[]), ...opts.controllers.flatMap((c) => (c.watches ?? []).map((w) => w.kind))]);

  let markLeading!: () => void;
  const firstLeading = new Promise<void>((resolve) => (markLeading = resolve));
  let leading: { cache: InformerCache; running: { name: string; stop(): Promise<void> }[] } | undefined;

  /** Stops what `l` runs, each controller once (a stop that races a start may come twice), then the informers. */
  const stopLeading = async (l = leading): Promise<void> => {
    if (l === leading) leading = undefined;
    if (!l) return;
    for (let c = l.running.pop(); c !== undefined; c = l.running.pop()) {
      await c.stop().catch((err: unknown) => opts.logger.error({ controller: c!.name, err }, 'controller did not stop cleanly'));
    }
    await l.cache.stop();
    opts.onLeadingChanged?.(false);
  };

  const done = opts.elector.run({
    onStartedLeading: async (signal) => {
      const cache = new InformerCache({ store: opts.store, namespace: opts.namespace, indexers, logger: opts.logger });
      for (const kind of kinds) cache.informerFor(kind);
      const current = { cache, running: [] as { name: string; stop(): Promise<void> }[] };
      leading = current;
      cache.start();
      await cache.waitForSync();
      for (const c of opts.controllers) {
        if (signal.aborted) break;
        const started = await c.start(cache);
        const detach: (() => void)[] = [];
        // Recorded before its watches attach: a start that fails here still stops it.
        current.running.push({
          name: c.name,
          stop: () => {
            for (const d of detach.splice(0)) d();
            return started.stop();
          },
        });
        for (const w of c.watches ?? []) {
          const enqueue = started.enqueue?.bind(started);
          if (!enqueue) throw new Error(`controller ${c.name} declares watches but cannot be enqueued to`);
          detach.push(attachWatch(cache, w, enqueue));
        }
        opts.logger.info({ controller: c.name }, 'controller started');
      }
      if (signal.aborted) {
        // Leadership ended while the controllers were starting: onStoppedLeading may have run before the last
        // of them was recorded. Stop whatever still runs.
        await stopLeading(current);
        return;
      }
      opts.onLeadingChanged?.(true);
      markLeading();
    },
    onStoppedLeading: () => stopLeading(),
  });

  let stopped: Promise<void> | undefined;
  return {
    leading: () => firstLeading,
    cache: () => leading?.cache,
    done,
    stop: () => (stopped ??= opts.elector.stop()),
  };
}
