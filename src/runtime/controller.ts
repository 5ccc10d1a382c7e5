import { DEFAULT_NAMESPACE, type Kind, type ResourceByKind } from '../api/v1alpha1/index.ts';
import { isTerminalError } from './errors.ts';
import { cacheKey, type Informer } from './informer.ts';
import { stderrLogger, type Logger } from '../lib/logger.ts';
import type { Backoff } from './backoff.ts';
import { WorkQueue, type WorkQueueMetrics } from './workQueue.ts';

export interface ObjectKey {
  namespace: string;
  name: string;
}

/** "Done" (until something changes), or "look again after this long" (≤ 0: as soon as a worker is free). */
export type ReconcileResult = { done: true } | { requeueAfterMs: number };

/**
 * Reads the object named by the key (it may be gone), takes one step, writes status. Throwing retries the
 * key with rate-limited backoff; throwing a TerminalError does not.
 */
export type Reconciler = (key: ObjectKey) => Promise<ReconcileResult>;

export type ReconcileOutcome = 'done' | 'requeueAfter' | 'error' | 'terminal';

export interface ControllerHooks {
  /** After each reconcile. */
  onReconcile?(e: { controller: string; key: ObjectKey; outcome: ReconcileOutcome; durationMs: number; error?: unknown }): void;
  /** When the number of keys waiting for a worker changes. */
  onQueueDepth?(e: { controller: string; depth: number }): void;
}

/**
 * What a controller reports for metrics (controller-runtime's reconcile_total, reconcile_errors_total,
 * reconcile_time_seconds and workqueue_*); free of any metrics library, implemented in src/metrics.
 */
export interface ControllerMetrics {
  workQueue: WorkQueueMetrics;
  reconciled(e: { outcome: ReconcileOutcome; seconds: number; error?: unknown }): void;
}

export interface ControllerStats {
  reconciles: number;
  errors: number;
  terminalErrors: number;
  requeues: number;
  queueDepth: number;
  inFlight: number;
  delayed: number;
}

export interface ControllerOptions<K extends Kind> {
  /** Names the controller in logs and metrics. */
  name: string;
  /** The informer whose changes trigger reconciles; shared informers are fine (the owner stops it). */
  informer: Informer<K>;
  reconcile: Reconciler;
  /** Keys reconciled at once (default 1); one key is never reconciled twice at once. */
  concurrency?: number;
  backoff?: Backoff<string>;
  /** Whether an update should trigger a reconcile (default: always, resyncs included). */
  updatePredicate?(oldObj: ResourceByKind[K], newObj: ResourceByKind[K]): boolean;
  hooks?: ControllerHooks;
  metrics?: ControllerMetrics;
  logger?: Logger;
}

/**
 * controller-runtime's controller: informer events become keys in a work queue; workers call the
 * reconciler with each key and act on its result: done → forget the key's backoff; requeueAfterMs → look
 * again then; error → retry with per-key exponential backoff; TerminalError → log and drop.
 */
export class Controller<K extends Kind> {
  private readonly queue: WorkQueue<string>;
  private readonly log: Logger;
  private removeHandler: (() => void) | undefined;
  private running = false;
  private readonly counts = { reconciles: 0, errors: 0, terminalErrors: 0, requeues: 0 };

  constructor(private readonly opts: ControllerOptions<K>) {
    this.log = opts.logger ?? stderrLogger;
    this.queue = new WorkQueue<string>({
      concurrency: opts.concurrency ?? 1,
      ...(opts.backoff && { backoff: opts.backoff }),
      onDepth: (depth) => opts.hooks?.onQueueDepth?.({ controller: opts.name, depth }),
      ...(opts.metrics && { metrics: opts.metrics.workQueue }),
    });
  }

  get name(): string {
    return this.opts.name;
  }

  /** Starts the informer (if not yet), waits for its cache to sync, then starts the workers. */
  async start(): Promise<void> {
    if (this.running) return;
    this.running = true;
    const enqueue = (obj: ResourceByKind[K]) => this.enqueue(obj.metadata);
    this.removeHandler = this.opts.informer.addEventHandler({
      onAdd: enqueue,
      onUpdate: (oldObj, newObj) => {
        if (!this.opts.updatePredicate || this.opts.updatePredicate(oldObj, newObj)) enqueue(newObj);
      },
      onDelete: enqueue,
    });
    this.opts.informer.start();
    await this.opts.informer.waitForSync();
    this.queue.start((key) => this.reconcileKey(key));
  }

  /** Queues a key: for changes the informer does not see (another kind's event, an external callback). */
  enqueue(key: { namespace?: string; name: string }): void {
    this.queue.add(cacheKey(key.namespace ?? DEFAULT_NAMESPACE, key.name));
  }

  /**
   * Stops taking new work and waits for the reconciles in flight; with drain (the default) the keys already
   * queued are reconciled first.
   */
  async stop(opts: { drain?: boolean } = {}): Promise<void> {
    this.removeHandler?.();
    this.removeHandler = undefined;
    await this.queue.shutdown({ drain: opts.drain ?? true });
    this.running = false;
  }

  stats(): ControllerStats {
    return {
      ...this.counts,
      queueDepth: this.queue.depth,
      inFlight: this.queue.inFlight,
      delayed: this.queue.delayedCount,
    };
  }

  private async reconcileKey(key: string): Promise<void> {
    const slash = key.indexOf('/');
    const objectKey: ObjectKey = { namespace: key.slice(0, slash), name: key.slice(slash + 1) };
    const started = performance.now();
    let outcome: ReconcileOutcome;
    let error: unknown;
    this.counts.reconciles++;
    try {
      const result = await this.opts.reconcile(objectKey);
      this.queue.forget(key);
      if ('requeueAfterMs' in result) {
        outcome = 'requeueAfter';
        this.counts.requeues++;
        this.queue.addAfter(key, result.requeueAfterMs);
      } else {
        outcome = 'done';
      }
    } catch (e) {
      error = e;
      if (isTerminalError(e)) {
        outcome = 'terminal';
        this.counts.terminalErrors++;
        this.queue.forget(key);
        this.log.error({ controller: this.opts.name, key, err: e }, 'reconcile failed for good; not retrying');
      } else {
        outcome = 'error';
        this.counts.errors++;
        this.queue.addRateLimited(key);
        this.log.warn(
          { controller: this.opts.name, key, err: e, retries: this.queue.numRequeues(key) },
          'reconcile failed; retrying with backoff',
        );
      }
    }
    const durationMs = performance.now() - started;
    this.opts.metrics?.reconciled({ outcome, seconds: durationMs / 1000, ...(error !== undefined && { error }) });
    this.opts.hooks?.onReconcile?.({
      controller: this.opts.name,
      key: objectKey,
      outcome,
      durationMs,
      ...(error !== undefined && { error }),
    });
  }
}
