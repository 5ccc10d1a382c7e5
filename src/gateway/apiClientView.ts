import type { ApiClient } from '../api/v1alpha1/index.ts';
import { InformerCache, type Logger } from '../runtime/index.ts';
import type { ResourceStore } from '../store/types.ts';

/**
 * The gateway's read-only view of the namespace's ApiClients (one list + watch), so authenticating a call reads
 * no store: in a cluster, one API-server read fewer per HTTP request (every execute, every status poll).
 *
 * A key disabled, rotated, narrowed or deleted takes effect when the watch delivers the change (milliseconds), as
 * it does for the controller; a watch that stalls without an error is replaced by the view's relist, every minute
 * (RELIST_MS), which bounds how stale a key can be. A key not in the view (created a moment ago, or never) is read
 * from the store, as before.
 */
export interface ApiClientView {
  /** The cached client (read only), or undefined: not synced yet, or not in the view. */
  get(id: string): ApiClient | undefined;
  stop(): Promise<void>;
}

/** The bound on a key's staleness at the gateway should its watch stall silently (jittered +20 % by the informer). */
const RELIST_MS = 60_000;

export function startApiClientView(store: ResourceStore, opts: { namespace: string; logger?: Logger }): ApiClientView {
  const cache = new InformerCache({ store, namespace: opts.namespace, relistPeriodMs: RELIST_MS, ...(opts.logger && { logger: opts.logger }) });
  const informer = cache.informerFor('ApiClient');
  // The informer's own (frozen) objects by name: read without the copy informer.get() makes.
  const byName = new Map<string, ApiClient>();
  informer.addEventHandler({
    onAdd: (c) => void byName.set(c.metadata.name, c),
    onUpdate: (_old, c) => void byName.set(c.metadata.name, c),
    onDelete: (c) => void byName.delete(c.metadata.name),
  });
  cache.start();
  return {
    get: (id) => (informer.hasSynced() ? byName.get(id) : undefined),
    stop: () => cache.stop(),
  };
}
