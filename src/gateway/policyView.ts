import type { AgentPolicy } from '../api/v1alpha1/index.ts';
import { InformerCache, type Logger } from '../runtime/index.ts';
import type { ResourceStore } from '../store/types.ts';

const BY_CLIENT = 'byClient';

/**
 * The gateway's read-only view of the namespace's AgentPolicies (one list + watch), for the early refusal of a
 * request its policies cannot accept (nothing created) and for `GET /policy`. The controller decides on its own
 * cache: until this one synced, or when it lags a change, the gateway lets a request through to that decision.
 */
export interface PolicyView {
  /** The policies of a key (cached objects, read only). */
  of(apiClient: string): readonly AgentPolicy[];
  readonly synced: boolean;
  stop(): Promise<void>;
}

export function startPolicyView(store: ResourceStore, opts: { namespace: string; logger?: Logger }): PolicyView {
  const cache = new InformerCache({
    store,
    namespace: opts.namespace,
    indexers: { AgentPolicy: { [BY_CLIENT]: (p) => [p.spec.apiClient] } },
    ...(opts.logger && { logger: opts.logger }),
  });
  const informer = cache.informerFor('AgentPolicy');
  cache.start();
  return {
    of: (apiClient) => informer.byIndex(BY_CLIENT, apiClient),
    get synced() {
      return informer.hasSynced();
    },
    stop: () => cache.stop(),
  };
}
