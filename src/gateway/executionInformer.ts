import type { ExecutionRequest } from '../api/v1alpha1/index.ts';
import { isStoreError, type ResourceStore, type WatchHandle } from '../store/types.ts';

/**
 * One list+watch of the namespace's ExecutionRequests shared by the whole gateway (an informer, in
 * client-go's terms): it keeps a cache, tells per-name subscribers about every change, and keeps the
 * newest-first order the public feed reads. One watch serves every waiting `POST /execute`, however many.
 *
 * The watch resumes from the list's resourceVersion, so no change between the list and the watch is lost.
 * It relists on Gone (410), after a failure (with jittered exponential backoff), and on a jittered timer,
 * because a silent watch cannot be told from a dead one.
 *
 * Memory: the cache holds every ExecutionRequest still in the store; finished ones leave with the
 * controller's TTL cleanup.
 */
export interface ExecutionInformer {
  readonly synced: boolean;
  /** Resolves after the first list has filled the cache. */
  waitForSync(): Promise<void>;
  get(name: string): ExecutionRequest | undefined;
  /** Newest first by creation time (ties broken by name, descending). */
  recent(limit: number): ExecutionRequest[];
  /** Calls `listener` with the object after each change of `name`, or with undefined when it is deleted. */
  subscribe(name: string, listener: (obj: ExecutionRequest | undefined) => void): () => void;
  stop(): void;
}

export interface ExecutionInformerOptions {
  namespace: string;
  /** Relist period (each period is jittered by up to +20%). */
  resyncMs?: number;
  initialBackoffMs?: number;
  maxBackoffMs?: number;
  onError?: (error: unknown) => void;
}

const creationKey = (o: ExecutionRequest): string => o.metadata.creationTimestamp ?? '';

function newestFirst(a: ExecutionRequest, b: ExecutionRequest): number {
  const ka = creationKey(a);
  const kb = creationKey(b);
  if (ka !== kb) return ka < kb ? 1 : -1;
  return a.metadata.name < b.metadata.name ? 1 : a.metadata.name > b.metadata.name ? -1 : 0;
}

const jitter = (ms: number, fraction: number): number => ms + Math.random() * ms * fraction;

export function startExecutionInformer(store: ResourceStore, opts: ExecutionInformerOptions): ExecutionInformer {
  const resyncMs = opts.resyncMs ?? 5 * 60_000;
  const initialBackoffMs = opts.initialBackoffMs ?? 200;
  const maxBackoffMs = opts.maxBackoffMs ?? 10_000;

  const cache = new Map<string, ExecutionRequest>();
  const listeners = new Map<string, Set<(obj: ExecutionRequest | undefined) => void>>();
  let order: ExecutionRequest[] | undefined; // sorted names' objects; rebuilt lazily when membership changes
  let synced = false;
  let stopped = false;
  let watch: WatchHandle | undefined;
  let resyncTimer: NodeJS.Timeout | undefined;
  let sleepTimer: { timer: NodeJS.Timeout; wake: () => void } | undefined;
  let resolveSync!: () => void;
  const syncedPromise = new Promise<void>((r) => (resolveSync = r));

  const notify = (name: string, obj: ExecutionRequest | undefined): void => {
    const set = listeners.get(name);
    if (!set) return;
    for (const l of [...set]) {
      try {
        l(obj);
      } catch (e) {
        opts.onError?.(e);
      }
    }
  };

  const put = (obj: ExecutionRequest): void => {
    if (!cache.has(obj.metadata.name)) order = undefined;
    cache.set(obj.metadata.name, obj);
    notify(obj.metadata.name, obj);
  };

  const remove = (name: string): void => {
    if (cache.delete(name)) order = undefined;
    notify(name, undefined);
  };

  const sleep = (ms: number): Promise<void> =>
    new Promise((resolve) => {
      const timer = setTimeout(() => {
        sleepTimer = undefined;
        resolve();
      }, ms);
      sleepTimer = { timer, wake: resolve };
    });

  async function run(): Promise<void> {
    let backoff = initialBackoffMs;
    while (!stopped) {
      try {
        const list = await store.list('ExecutionRequest', { namespace: opts.namespace });
        if (stopped) return;
        const seen = new Set<string>();
        for (const obj of list.items) {
          seen.add(obj.metadata.name);
          const prev = cache.get(obj.metadata.name);
          if (prev?.metadata.resourceVersion !== obj.metadata.resourceVersion) put(obj);
        }
        // Gone from the list means deleted while we were not watching.
        for (const name of [...cache.keys()]) if (!seen.has(name)) remove(name);
        if (!synced) {
          synced = true;
          resolveSync();
        }
        backoff = initialBackoffMs;

        // A store may deliver the first events synchronously, inside watch(): gate on a flag, not on `watch`.
        let current = true;
        const handle = store.watch(
          'ExecutionRequest',
          { namespace: opts.namespace, resourceVersion: list.resourceVersion },
          (event) => {
            if (stopped || !current) return;
            if (event.type === 'DELETED') remove(event.object.metadata.name);
            else put(event.object);
          },
        );
        watch = handle;
        resyncTimer = setTimeout(() => handle.stop(), jitter(resyncMs, 0.2));
        try {
          await handle.done; // resolves on stop() (resync or shutdown): relist unless stopped
        } finally {
          current = false;
          clearTimeout(resyncTimer);
          watch = undefined;
        }
      } catch (e) {
        if (stopped) return;
        if (isStoreError(e, 'Gone')) continue; // our resourceVersion is too old: relist at once
        opts.onError?.(e);
        await sleep(jitter(backoff, 0.5));
        backoff = Math.min(backoff * 2, maxBackoffMs);
      }
    }
  }

  void run();

  return {
    get synced() {
      return synced;
    },
    waitForSync: () => syncedPromise,
    get: (name) => cache.get(name),
    recent(limit) {
      order ??= [...cache.values()].sort(newestFirst);
      // `order` holds the objects as they were when it was built; read the current version from the cache.
      return order.slice(0, limit).map((o) => cache.get(o.metadata.name) ?? o);
    },
    subscribe(name, listener) {
      let set = listeners.get(name);
      if (!set) listeners.set(name, (set = new Set()));
      set.add(listener);
      return () => {
        set.delete(listener);
        if (set.size === 0 && listeners.get(name) === set) listeners.delete(name);
      };
    },
    stop() {
      stopped = true;
      watch?.stop();
      clearTimeout(resyncTimer);
      if (sleepTimer) {
        clearTimeout(sleepTimer.timer);
        sleepTimer.wake();
      }
    },
  };
}
