import type { ExecutionRequest } from '../api/v1alpha1/index.ts';
import type { LeaderElector } from '../lib/leaderElection.ts';
import type { Logger } from '../lib/logger.ts';
import { Informer } from '../runtime/index.ts';
import type { ResourceStore } from '../store/types.ts';

/** One controller the manager runs: what it reads from the shared cache, and how it starts on it. */
export interface ManagedController {
  readonly name: string;
  /** Indexes it reads, added to the shared ExecutionRequest informer (names must not collide). */
  readonly indexers?: Readonly<Record<string, (r: ExecutionRequest) => readonly string[]>>;
  /** Starts on the shared informer, which is synced by then; resolves once it reconciles. */
  start(informer: Informer<'ExecutionRequest'>): Promise<{ stop(): Promise<void> }>;
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
  /** The shared informer while leading (for diagnostics and tests), else undefined. */
  informer(): Informer<'ExecutionRequest'> | undefined;
  /** Resolves when the elector's run ends (after stop()); rejects if a start failed. */
  readonly done: Promise<void>;
  /** Stops the controllers, releases leadership. Idempotent. */
  stop(): Promise<void>;
}

/**
 * controller-runtime's manager: the controllers of the service and the one cache they share, run only while
 * this process leads. Leading starts one ExecutionRequest informer (list + watch, with every controller's
 * indexes), waits for it to sync, then starts the controllers in order; losing or giving up leadership stops
 * them in reverse order (reconciles in flight finish; their writes carry resourceVersion preconditions), then
 * the informer. Both ways to run use it: the embedded role with `alwaysLeader()`, the cluster's controller
 * role with a Lease, so neither composes controllers by hand.
 */
export function startControllerManager(opts: ControllerManagerOptions): ControllerManager {
  const indexers: Record<string, (r: ExecutionRequest) => readonly string[]> = {};
  for (const c of opts.controllers) {
    for (const [name, fn] of Object.entries(c.indexers ?? {})) {
      if (name in indexers) throw new Error(`controller ${c.name}: index ${name} is already defined by another controller`);
      indexers[name] = fn;
    }
  }

  let markLeading!: () => void;
  const firstLeading = new Promise<void>((resolve) => (markLeading = resolve));
  let leading: { informer: Informer<'ExecutionRequest'>; running: { name: string; stop(): Promise<void> }[] } | undefined;

  /** Stops what `l` runs, each controller once (a stop that races a start may come twice), then the informer. */
  const stopLeading = async (l = leading): Promise<void> => {
    if (l === leading) leading = undefined;
    if (!l) return;
    for (let c = l.running.pop(); c !== undefined; c = l.running.pop()) {
      await c.stop().catch((err: unknown) => opts.logger.error({ controller: c!.name, err }, 'controller did not stop cleanly'));
    }
    await l.informer.stop();
    opts.onLeadingChanged?.(false);
  };

  const done = opts.elector.run({
    onStartedLeading: async (signal) => {
      const informer = new Informer({
        store: opts.store,
        kind: 'ExecutionRequest',
        namespace: opts.namespace,
        relistPeriodMs: 10 * 60_000,
        indexers,
        logger: opts.logger,
      });
      const current = { informer, running: [] as { name: string; stop(): Promise<void> }[] };
      leading = current;
      informer.start();
      await informer.waitForSync();
      for (const c of opts.controllers) {
        if (signal.aborted) break;
        const started = await c.start(informer);
        current.running.push({ name: c.name, stop: () => started.stop() });
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
    informer: () => leading?.informer,
    done,
    stop: () => (stopped ??= opts.elector.stop()),
  };
}
