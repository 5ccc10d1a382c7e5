import { ANNOTATIONS, type ExecutionRequest } from '../api/v1alpha1/index.ts';
import { createdAt } from '../api/http/presentStatus.ts';
import { InformerCache, type Logger } from '../runtime/index.ts';
import type { ResourceStore } from '../store/types.ts';

/**
 * The gateway's one shared view of the namespace's ExecutionRequests: the ExecutionRequest informer of a cache of
 * the same type the controller manager runs (list, then watch from the list's resourceVersion; relist on Gone and
 * on a jittered period), read only. On top of it:
 * per-name subscriptions, so one watch serves every waiting `POST /execute` however many there are, and
 * the newest-first order the public feed reads without a store query per call.
 *
 * Memory: the cache holds every ExecutionRequest still in the store; finished ones leave with the
 * controller's TTL cleanup.
 */
export interface ExecutionInformer {
  readonly synced: boolean;
  /** Resolves after the first list has filled the cache. */
  waitForSync(): Promise<void>;
  /** The cached object (deep-frozen: read only). */
  get(name: string): ExecutionRequest | undefined;
  /** The cached objects `filter` keeps (read only). */
  list(filter: (obj: ExecutionRequest) => boolean): ExecutionRequest[];
  /** Newest first by creation time as the API shows it (`created_at`, ms); cached objects, read only. */
  recent(limit: number): ExecutionRequest[];
  /** Calls `listener` with the object after each change of `name`, or with undefined when it is deleted. */
  subscribe(name: string, listener: (obj: ExecutionRequest | undefined) => void): () => void;
  stop(): Promise<void>;
}

export interface ExecutionInformerOptions {
  namespace: string;
  /** Relist period, jittered by the informer (default 10 min). */
  relistPeriodMs?: number;
  logger?: Logger;
}

/**
 * The creation time the API shows (`created_at`): the accepted id's milliseconds. Not the store's
 * creationTimestamp, which has whole seconds: within one second it would leave the order to the names, and a
 * request named by its Idempotency-Key has a hash for a name.
 */
const creationMs = (o: ExecutionRequest): number => Date.parse(createdAt(o));
/** Ties within one millisecond: the accepted ids (ULIDs, monotonic in one gateway), then the names. */
const tieKey = (o: ExecutionRequest): string => `${o.metadata.annotations?.[ANNOTATIONS.accepted] ?? ''}\n${o.metadata.name}`;

function newestFirst(a: ExecutionRequest, b: ExecutionRequest): number {
  const ta = creationMs(a);
  const tb = creationMs(b);
  if (ta !== tb) return tb - ta;
  const ka = tieKey(a);
  const kb = tieKey(b);
  return ka < kb ? 1 : ka > kb ? -1 : 0;
}

export function startExecutionInformer(store: ResourceStore, opts: ExecutionInformerOptions): ExecutionInformer {
  const cache = new InformerCache({
    store,
    namespace: opts.namespace,
    relistPeriodMs: opts.relistPeriodMs ?? 10 * 60_000,
    ...(opts.logger && { logger: opts.logger }),
  });
  const informer = cache.informerFor('ExecutionRequest');
  // The informer's own cached (frozen) objects, by name: read without the copy informer.get() makes.
  const byName = new Map<string, ExecutionRequest>();
  const listeners = new Map<string, Set<(obj: ExecutionRequest | undefined) => void>>();
  let order: string[] | undefined; // names, newest first; rebuilt lazily when membership changes

  const notify = (name: string, obj: ExecutionRequest | undefined): void => {
    for (const l of [...(listeners.get(name) ?? [])]) l(obj);
  };

  informer.addEventHandler({
    onAdd(obj) {
      byName.set(obj.metadata.name, obj);
      order = undefined;
      notify(obj.metadata.name, obj);
    },
    onUpdate(_old, obj) {
      byName.set(obj.metadata.name, obj);
      notify(obj.metadata.name, obj);
    },
    onDelete(obj) {
      if (byName.delete(obj.metadata.name)) order = undefined;
      notify(obj.metadata.name, undefined);
    },
  });
  cache.start();

  return {
    get synced() {
      return informer.hasSynced();
    },
    waitForSync: () => informer.waitForSync(),
    get: (name) => byName.get(name),
    list: (filter) => [...byName.values()].filter(filter),
    recent(limit) {
      order ??= [...byName.values()].sort(newestFirst).map((o) => o.metadata.name);
      const out: ExecutionRequest[] = [];
      for (const name of order) {
        if (out.length >= limit) break;
        const obj = byName.get(name);
        if (obj) out.push(obj);
      }
      return out;
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
    stop: () => cache.stop(),
  };
}
