import { StoreError, type ResourceStore, type WatchHandle } from '../../store/types.ts';

/**
 * Fault injection for informer tests: a real store whose open watches the test can cut, as a dropped
 * connection to the API server would (the watch ends with Unavailable). Every call goes to the real store.
 */
export function cuttable(store: ResourceStore): { store: ResourceStore; cutWatches(): number } {
  const open = new Set<{ handle: WatchHandle; fail: (e: StoreError) => void }>();
  const wrapped: ResourceStore = {
    get: (kind, name, namespace) => store.get(kind, name, namespace),
    list: (kind, opts) => store.list(kind, opts),
    create: (obj) => store.create(obj),
    update: (obj) => store.update(obj),
    updateStatus: (obj) => store.updateStatus(obj),
    delete: (kind, name, opts) => store.delete(kind, name, opts),
    close: () => store.close(),
    health: () => store.health(),
    watch(kind, opts, onEvent) {
      const inner = store.watch(kind, opts, onEvent);
      let fail!: (e: StoreError) => void;
      const cut = new Promise<never>((_, reject) => (fail = reject));
      const entry = { handle: inner, fail };
      open.add(entry);
      const done = Promise.race([inner.done, cut]).finally(() => open.delete(entry));
      done.catch(() => undefined);
      return { stop: () => inner.stop(), done };
    },
  };
  return {
    store: wrapped,
    cutWatches() {
      const n = open.size;
      for (const entry of [...open]) {
        // Fail first: `done` must end with the error, not with the inner watch's clean stop.
        entry.fail(new StoreError('Unavailable', 'watch connection dropped (test)'));
        entry.handle.stop();
      }
      return n;
    },
  };
}
