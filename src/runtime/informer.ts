import { DEFAULT_NAMESPACE, type Kind, type ResourceByKind } from '../api/v1alpha1/index.ts';
import { isStoreError, type ResourceStore, type WatchEvent, type WatchHandle } from '../store/types.ts';
import { stderrLogger, type Logger } from '../lib/logger.ts';

export interface EventHandlers<T> {
  onAdd?(obj: T): void;
  onUpdate?(oldObj: T, newObj: T): void;
  onDelete?(obj: T): void;
}

export interface InformerOptions<K extends Kind> {
  store: ResourceStore;
  kind: K;
  namespace?: string;
  labelSelector?: Record<string, string>;
  /** Re-deliver every cached object to the handlers as an update on this period (0 = never, the default). */
  resyncPeriodMs?: number;
  /**
   * List again from scratch on this period, jittered by up to +20% (default 30 min; 0 = never): a watch
   * that has silently stopped delivering cannot be told from a quiet one.
   */
  relistPeriodMs?: number;
  /** Backoff before restarting a failed list or watch: doubles from the first value to the second, jittered. */
  backoffMs?: [initial: number, max: number];
  /** Secondary indexes: name → the index values of an object (e.g. a label's value). */
  indexers?: Record<string, (obj: ResourceByKind[K]) => readonly string[]>;
  logger?: Logger;
}

export const cacheKey = (namespace: string, name: string): string => `${namespace}/${name}`;

/**
 * client-go's informer: list, then watch from the list's resourceVersion, keeping a local cache and
 * telling handlers about each change. On Gone it lists again (and tells handlers the difference, deletions
 * included); when a watch fails otherwise it resumes from the last version seen after a jittered backoff.
 *
 * Handlers get the cached object itself, deep-frozen: read it, don't change it. get() and list() return
 * mutable deep copies.
 */
export class Informer<K extends Kind> {
  private readonly cache = new Map<string, ResourceByKind[K]>();
  private readonly indexes = new Map<string, Map<string, Set<string>>>();
  private readonly handlers: EventHandlers<ResourceByKind[K]>[] = [];
  private synced = false;
  private syncWaiters: (() => void)[] = [];
  private started = false;
  private stopped = false;
  private watch: WatchHandle | undefined;
  private lastResourceVersion: string | undefined;
  private wake: (() => void) | undefined;
  private loop: Promise<void> | undefined;
  private resyncTimer: NodeJS.Timeout | undefined;
  private readonly log: Logger;
  /** Counts for tests and metrics: how often the informer listed, and watched. */
  readonly counters = { lists: 0, watches: 0, gone: 0, watchErrors: 0 };

  constructor(private readonly opts: InformerOptions<K>) {
    this.log = opts.logger ?? stderrLogger;
    for (const name of Object.keys(opts.indexers ?? {})) this.indexes.set(name, new Map());
  }

  get kind(): K {
    return this.opts.kind;
  }

  /** Adds handlers; objects already cached are delivered to them as adds (asynchronously). */
  addEventHandler(handlers: EventHandlers<ResourceByKind[K]>): () => void {
    this.handlers.push(handlers);
    if (this.synced && handlers.onAdd) {
      const existing = [...this.cache.values()];
      queueMicrotask(() => {
        for (const obj of existing) this.call(() => handlers.onAdd?.(obj));
      });
    }
    return () => {
      const i = this.handlers.indexOf(handlers);
      if (i >= 0) this.handlers.splice(i, 1);
    };
  }

  /** Starts listing and watching (idempotent). */
  start(): void {
    if (this.started) return;
    this.started = true;
    this.loop = this.run();
    const resync = this.opts.resyncPeriodMs ?? 0;
    if (resync > 0) {
      this.resyncTimer = setInterval(() => this.resync(), resync);
      this.resyncTimer.unref();
    }
  }

  hasSynced(): boolean {
    return this.synced;
  }

  /** Resolves once the first list has filled the cache (and its adds have been delivered). */
  waitForSync(): Promise<void> {
    if (this.synced) return Promise.resolve();
    return new Promise((resolve) => this.syncWaiters.push(resolve));
  }

  async stop(): Promise<void> {
    this.stopped = true;
    if (this.resyncTimer) clearInterval(this.resyncTimer);
    this.watch?.stop();
    this.wake?.();
    await this.loop;
  }

  /** The resourceVersion of the last list or event applied to the cache. */
  get resourceVersion(): string | undefined {
    return this.lastResourceVersion;
  }

  get(name: string, namespace = DEFAULT_NAMESPACE): ResourceByKind[K] | undefined {
    const obj = this.cache.get(cacheKey(namespace, name));
    return obj === undefined ? undefined : structuredClone(obj);
  }

  /**
   * The cached object itself, deep-frozen, without get()'s copy: for a reader that builds new objects from it
   * rather than changing it (a reconciler on the hot path, where the copies cost more than anything it does).
   */
  peek(name: string, namespace = DEFAULT_NAMESPACE): Readonly<ResourceByKind[K]> | undefined {
    return this.cache.get(cacheKey(namespace, name));
  }

  list(filter?: (obj: ResourceByKind[K]) => boolean): ResourceByKind[K][] {
    const out: ResourceByKind[K][] = [];
    for (const obj of this.cache.values()) if (!filter || filter(obj)) out.push(structuredClone(obj));
    return out;
  }

  /** Objects whose indexer `indexName` yields `value`. */
  byIndex(indexName: string, value: string): ResourceByKind[K][] {
    const index = this.indexes.get(indexName);
    if (!index) throw new Error(`informer of ${this.opts.kind} has no index ${JSON.stringify(indexName)}`);
    const out: ResourceByKind[K][] = [];
    for (const key of index.get(value) ?? []) {
      const obj = this.cache.get(key);
      if (obj !== undefined) out.push(structuredClone(obj));
    }
    return out;
  }

  /**
   * How many objects of an index match `predicate`, without copying them (the predicate gets the cached,
   * deep-frozen objects): for checks on a hot path, where byIndex's copies would dominate.
   */
  countByIndex(indexName: string, value: string, predicate: (obj: ResourceByKind[K]) => boolean = () => true): number {
    const index = this.indexes.get(indexName);
    if (!index) throw new Error(`informer of ${this.opts.kind} has no index ${JSON.stringify(indexName)}`);
    let n = 0;
    for (const key of index.get(value) ?? []) {
      const obj = this.cache.get(key);
      if (obj !== undefined && predicate(obj)) n++;
    }
    return n;
  }

  get size(): number {
    return this.cache.size;
  }

  // ---- the list-watch loop ----

  private async run(): Promise<void> {
    const [initialBackoff, maxBackoff] = this.opts.backoffMs ?? [100, 30_000];
    let backoff = initialBackoff;
    let needList = true;
    while (!this.stopped) {
      try {
        if (needList) {
          await this.relist();
          needList = false;
        }
        const outcome = await this.watchOnce();
        backoff = initialBackoff;
        if (outcome === 'relist') needList = true;
      } catch (e) {
        if (this.stopped) break;
        if (isStoreError(e, 'Gone')) {
          // Too far behind to resume: list again, right away.
          this.counters.gone++;
          needList = true;
          continue;
        }
        this.counters.watchErrors++;
        this.log.warn({ kind: this.opts.kind, err: e, retryInMs: backoff }, 'informer: list/watch failed');
        await this.sleep(backoff * (1 + Math.random() * 0.2));
        backoff = Math.min(backoff * 2, maxBackoff);
      }
    }
  }

  /** Lists and replaces the cache, telling handlers the difference. */
  private async relist(): Promise<void> {
    this.counters.lists++;
    const { items, resourceVersion } = await this.opts.store.list(this.opts.kind, {
      ...(this.opts.namespace !== undefined && { namespace: this.opts.namespace }),
      ...(this.opts.labelSelector !== undefined && { labelSelector: this.opts.labelSelector }),
    });
    if (this.stopped) return;
    const seen = new Set<string>();
    for (const item of items) {
      const key = cacheKey(item.metadata.namespace, item.metadata.name);
      seen.add(key);
      const old = this.cache.get(key);
      if (old !== undefined && old.metadata.resourceVersion === item.metadata.resourceVersion) continue;
      this.put(key, item, old);
    }
    for (const [key, old] of [...this.cache]) if (!seen.has(key)) this.remove(key, old);
    this.lastResourceVersion = resourceVersion;
    if (!this.synced) {
      this.synced = true;
      for (const w of this.syncWaiters.splice(0)) w();
    }
  }

  /**
   * Watches from the last version until the watch ends. Resolves 'relist' when the relist period is up,
   * 'ended' when it was stopped otherwise; rejects with the watch's error (Gone included).
   */
  private async watchOnce(): Promise<'relist' | 'ended'> {
    this.counters.watches++;
    const handle = this.opts.store.watch(
      this.opts.kind,
      {
        ...(this.lastResourceVersion !== undefined && { resourceVersion: this.lastResourceVersion }),
        ...(this.opts.namespace !== undefined && { namespace: this.opts.namespace }),
        ...(this.opts.labelSelector !== undefined && { labelSelector: this.opts.labelSelector }),
      },
      (event) => this.apply(event),
    );
    this.watch = handle;
    if (this.stopped) handle.stop();
    const relistMs = this.opts.relistPeriodMs ?? 30 * 60_000;
    let relistDue = false;
    const timer =
      relistMs > 0
        ? setTimeout(
            () => {
              relistDue = true;
              handle.stop();
            },
            relistMs * (1 + Math.random() * 0.2),
          )
        : undefined;
    timer?.unref();
    try {
      await handle.done;
    } finally {
      if (timer) clearTimeout(timer);
      this.watch = undefined;
    }
    return relistDue && !this.stopped ? 'relist' : 'ended';
  }

  private apply(event: WatchEvent<ResourceByKind[K]>): void {
    const obj = event.object;
    const key = cacheKey(obj.metadata.namespace, obj.metadata.name);
    if (obj.metadata.resourceVersion !== undefined) this.lastResourceVersion = obj.metadata.resourceVersion;
    if (event.type === 'DELETED') {
      const old = this.cache.get(key);
      if (old !== undefined) this.remove(key, deepFreeze(obj));
    } else {
      this.put(key, obj, this.cache.get(key));
    }
  }

  private put(key: string, obj: ResourceByKind[K], old: ResourceByKind[K] | undefined): void {
    const frozen = deepFreeze(obj);
    if (old !== undefined) this.unindex(key, old);
    this.cache.set(key, frozen);
    this.index(key, frozen);
    for (const h of this.handlers) {
      if (old === undefined) this.call(() => h.onAdd?.(frozen));
      else this.call(() => h.onUpdate?.(old, frozen));
    }
  }

  private remove(key: string, last: ResourceByKind[K]): void {
    const old = this.cache.get(key);
    if (old !== undefined) this.unindex(key, old);
    this.cache.delete(key);
    for (const h of this.handlers) this.call(() => h.onDelete?.(last));
  }

  private resync(): void {
    if (!this.synced || this.stopped) return;
    for (const obj of this.cache.values()) for (const h of this.handlers) this.call(() => h.onUpdate?.(obj, obj));
  }

  private index(key: string, obj: ResourceByKind[K]): void {
    for (const [name, fn] of Object.entries(this.opts.indexers ?? {})) {
      const index = this.indexes.get(name)!;
      for (const value of fn(obj)) {
        let keys = index.get(value);
        if (!keys) index.set(value, (keys = new Set()));
        keys.add(key);
      }
    }
  }

  private unindex(key: string, obj: ResourceByKind[K]): void {
    for (const [name, fn] of Object.entries(this.opts.indexers ?? {})) {
      const index = this.indexes.get(name)!;
      for (const value of fn(obj)) {
        const keys = index.get(value);
        keys?.delete(key);
        if (keys?.size === 0) index.delete(value);
      }
    }
  }

  /** A handler's bug must not break the cache for every other handler. */
  private call(fn: () => void): void {
    try {
      fn();
    } catch (err) {
      this.log.error({ kind: this.opts.kind, err }, 'informer: event handler threw');
    }
  }

  private sleep(ms: number): Promise<void> {
    return new Promise((resolve) => {
      const timer = setTimeout(done, ms);
      function done() {
        clearTimeout(timer);
        resolve();
      }
      this.wake = done;
    });
  }
}

function deepFreeze<T>(obj: T): T {
  if (obj !== null && typeof obj === 'object' && !Object.isFrozen(obj)) {
    Object.freeze(obj);
    for (const v of Object.values(obj)) deepFreeze(v);
  }
  return obj;
}
