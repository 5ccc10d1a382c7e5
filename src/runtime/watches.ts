import type { Kind, ResourceByKind } from '../api/v1alpha1/index.ts';
import type { CacheReader } from './cache.ts';
import type { ObjectKey } from './controller.ts';

/** One change the informer of a watched kind saw (objects are the cache's own: read only). */
export type Change<T> = { type: 'added'; obj: T } | { type: 'updated'; old: T; obj: T } | { type: 'deleted'; obj: T };

/**
 * controller-runtime's `Watches(kind, EnqueueRequestsFromMapFunc(fn))`: a change of another kind maps to the keys
 * of the controller's own objects it concerns, read from the shared caches (typically through an index).
 */
export interface WatchOf<K extends Kind> {
  kind: K;
  map(change: Change<ResourceByKind[K]>, cache: CacheReader): readonly ObjectKey[];
}
export type Watch = { [K in Kind]: WatchOf<K> }[Kind];

/** Declares a watch with its kind's object type inferred for `map`. */
export const watchOf = <K extends Kind>(w: WatchOf<K>): Watch => w as unknown as Watch;

/** Feeds the watched kind's changes, mapped, to `enqueue`; returns the detach. */
export function attachWatch(cache: CacheReader, watch: Watch, enqueue: (key: ObjectKey) => void): () => void {
  const w = watch as WatchOf<Kind>;
  const send = (change: Change<ResourceByKind[Kind]>) => {
    for (const key of w.map(change, cache)) enqueue(key);
  };
  return cache.informerFor(w.kind).addEventHandler({
    onAdd: (obj) => send({ type: 'added', obj }),
    onUpdate: (old, obj) => send({ type: 'updated', old, obj }),
    onDelete: (obj) => send({ type: 'deleted', obj }),
  });
}
