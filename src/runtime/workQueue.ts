import { ExponentialBackoff, type Backoff } from './backoff.ts';

export interface WorkQueueOptions<K> {
  /** Keys processed at once (default 1). One key is never processed by two workers at once. */
  concurrency?: number;
  backoff?: Backoff<K>;
  /** Called when the number of keys waiting (ready, not delayed) changes. */
  onDepth?: (depth: number) => void;
  /** A handler that rejects: reported here, and the key is retried with rate-limited backoff. */
  onError?: (key: K, error: unknown) => void;
  /** Reports adds, retries, depth and latencies (client-go's workqueue metrics); optional. */
  metrics?: WorkQueueMetrics;
}

/**
 * What a work queue reports for metrics, as client-go's workqueue does: kept free of any metrics library so
 * the runtime stays a plain library (src/metrics implements it with prom-client).
 */
export interface WorkQueueMetrics {
  /** A key became queued: adds of a key that is already waiting are not counted. */
  added(): void;
  /** Keys ready and waiting for a worker. */
  depth(n: number): void;
  /** A key was put back with rate-limited backoff after a failure. */
  retried(): void;
  /** A key was handed to a worker after waiting this long since it was added. */
  waited(seconds: number): void;
  /** A worker finished a key after this long. */
  worked(seconds: number): void;
}

export interface ShutdownOptions {
  /** Process the keys already waiting before stopping (default false: drop them). */
  drain?: boolean;
}

/**
 * A work queue with client-go's semantics:
 * - a key waiting to be processed is queued once however often it is added (dirty set);
 * - a key being processed is never handed to a second worker: added meanwhile, it is queued again when the
 *   current processing finishes, so the change that caused the add is always seen;
 * - addAfter delays an add (the earliest of several pending delays wins), addRateLimited delays by the
 *   key's backoff, forget resets it;
 * - shutdown stops taking keys and waits for the ones in flight (and, with drain, those already waiting).
 * Keys are compared with SameValueZero (use strings such as "namespace/name").
 */
export class WorkQueue<K> {
  private readonly concurrency: number;
  private readonly backoff: Backoff<K>;
  private queue: K[] = [];
  private head = 0;
  /** Keys that need processing: waiting in the queue, or added again while being processed. */
  private readonly dirty = new Set<K>();
  private readonly processing = new Set<K>();
  private readonly delayed = new Map<K, { at: number; timer: NodeJS.Timeout }>();
  /** When each dirty key was added (performance.now()), for the wait-time metric; only kept with metrics. */
  private readonly addedAt = new Map<K, number>();
  private handler: ((key: K) => Promise<void>) | undefined;
  private pumpScheduled = false;
  private shuttingDown = false;
  private draining = false;
  private idleWaiters: (() => void)[] = [];

  constructor(private readonly opts: WorkQueueOptions<K> = {}) {
    this.concurrency = Math.max(1, opts.concurrency ?? 1);
    this.backoff = opts.backoff ?? new ExponentialBackoff<K>();
  }

  /** Starts `concurrency` workers calling `handler` for each key. */
  start(handler: (key: K) => Promise<void>): void {
    if (this.handler) throw new Error('work queue already started');
    this.handler = handler;
    this.schedulePump();
  }

  add(key: K): void {
    if (this.shuttingDown || this.dirty.has(key)) return;
    this.dirty.add(key);
    if (this.opts.metrics) {
      this.opts.metrics.added();
      this.addedAt.set(key, performance.now());
    }
    if (this.processing.has(key)) return; // re-queued by done()
    this.queue.push(key);
    this.depthChanged();
    this.schedulePump();
  }

  addAfter(key: K, delayMs: number): void {
    if (this.shuttingDown) return;
    if (delayMs <= 0) {
      this.add(key);
      return;
    }
    const at = Date.now() + delayMs;
    const existing = this.delayed.get(key);
    if (existing && existing.at <= at) return;
    if (existing) clearTimeout(existing.timer);
    const timer = setTimeout(() => {
      this.delayed.delete(key);
      this.add(key);
    }, delayMs);
    timer.unref();
    this.delayed.set(key, { at, timer });
  }

  addRateLimited(key: K): void {
    this.opts.metrics?.retried();
    this.addAfter(key, this.backoff.when(key));
  }

  forget(key: K): void {
    this.backoff.forget(key);
  }

  numRequeues(key: K): number {
    return this.backoff.numRequeues(key);
  }

  /** Keys ready and waiting for a worker. */
  get depth(): number {
    return this.queue.length - this.head;
  }

  get inFlight(): number {
    return this.processing.size;
  }

  /** Keys waiting for a delay (requeue-after or backoff) to pass. */
  get delayedCount(): number {
    return this.delayed.size;
  }

  get isShuttingDown(): boolean {
    return this.shuttingDown;
  }

  /**
   * Stops accepting keys and cancels delayed ones. Without drain, keys still waiting are dropped; with
   * drain they are processed first. Either way, resolves once nothing is being processed.
   */
  async shutdown(opts: ShutdownOptions = {}): Promise<void> {
    this.shuttingDown = true;
    this.draining = opts.drain === true && this.handler !== undefined;
    for (const { timer } of this.delayed.values()) clearTimeout(timer);
    this.delayed.clear();
    if (!this.draining) {
      this.queue = [];
      this.head = 0;
      this.dirty.clear();
      this.addedAt.clear();
      this.depthChanged();
    }
    if (this.processing.size === 0 && (this.depth === 0 || !this.draining)) return;
    await new Promise<void>((resolve) => this.idleWaiters.push(resolve));
  }

  private schedulePump(): void {
    if (this.pumpScheduled || !this.handler) return;
    this.pumpScheduled = true;
    // Workers start outside the caller's frame (add() never runs a handler re-entrantly), and on a macrotask:
    // a key requeued at once, again and again, must leave turns for I/O, timers and the watch events that
    // would end its loop. On microtasks alone such a loop starved the whole process (CI: no answer for 30 min).
    setImmediate(() => {
      this.pumpScheduled = false;
      this.pump();
    });
  }

  private pump(): void {
    const handler = this.handler;
    if (!handler) return;
    while (this.processing.size < this.concurrency && this.depth > 0) {
      if (this.shuttingDown && !this.draining) return;
      const key = this.queue[this.head++] as K;
      if (this.head > 1024 && this.head * 2 > this.queue.length) {
        this.queue = this.queue.slice(this.head);
        this.head = 0;
      }
      this.dirty.delete(key);
      this.processing.add(key);
      this.depthChanged();
      const addedAt = this.addedAt.get(key);
      if (addedAt !== undefined) {
        this.addedAt.delete(key);
        this.opts.metrics?.waited((performance.now() - addedAt) / 1000);
      }
      void this.process(handler, key);
    }
  }

  private async process(handler: (key: K) => Promise<void>, key: K): Promise<void> {
    const started = performance.now();
    try {
      await handler(key);
    } catch (e) {
      this.opts.onError?.(key, e);
      if (!this.shuttingDown) this.addRateLimited(key);
    } finally {
      this.opts.metrics?.worked((performance.now() - started) / 1000);
      this.done(key);
    }
  }

  private done(key: K): void {
    this.processing.delete(key);
    if (this.dirty.has(key)) {
      if (this.shuttingDown && !this.draining) {
        this.dirty.delete(key);
        this.addedAt.delete(key);
      } else {
        this.queue.push(key);
        this.depthChanged();
      }
    }
    if (this.processing.size === 0 && (this.depth === 0 || (this.shuttingDown && !this.draining))) {
      if (this.shuttingDown) for (const w of this.idleWaiters.splice(0)) w();
    }
    this.schedulePump();
  }

  private depthChanged(): void {
    this.opts.metrics?.depth(this.depth);
    this.opts.onDepth?.(this.depth);
  }
}
