import type { AnyResource, Kind } from '../../api/v1alpha1/index.ts';
import { isStoreError, type ResourceStore } from '../types.ts';
import type { AuditLog, AuditRecord } from './log.ts';

/** The kinds whose changes are an operator's and are audited: API keys and agent policies. */
export const AUDITED_KINDS: ReadonlySet<Kind> = new Set<Kind>(['ApiClient', 'AgentPolicy']);

/**
 * `store` with every write of an audited kind recorded in `log`: who (`actor`, as the channel that wrote it knows
 * them), when, which object, and its content before and after. In a cluster the API server's audit log does this
 * (deploy/kind/audit-policy.yaml); this is the embedded store's, used by the admin socket and the CLI on a data
 * directory. The record is written after the store accepted the change: a refused write records nothing.
 */
export function auditedStore(store: ResourceStore, log: AuditLog, actor: string): ResourceStore {
  const before = async (kind: Kind, name: string, namespace?: string): Promise<AnyResource | undefined> => {
    try {
      return await store.get(kind, name, namespace);
    } catch (e) {
      if (isStoreError(e, 'NotFound')) return undefined;
      throw e;
    }
  };
  const record = (r: Omit<AuditRecord, 'time' | 'actor'>) => log.append({ time: new Date().toISOString(), actor, ...r });
  const kindOf = (obj: AnyResource) => obj.kind as Kind;
  /** An update of `obj` by `write`, recorded with the object as it was before. */
  const changed = async <T extends AnyResource>(obj: T, verb: 'update' | 'update-status', write: () => Promise<T>): Promise<T> => {
    if (!AUDITED_KINDS.has(kindOf(obj))) return write();
    const old = await before(kindOf(obj), obj.metadata.name, obj.metadata.namespace);
    const updated = await write();
    await record({ verb, kind: kindOf(obj), namespace: updated.metadata.namespace, name: updated.metadata.name, from: old ?? null, to: updated });
    return updated;
  };
  return {
    ...bindAll(store),
    async create<T extends AnyResource>(obj: T): Promise<T> {
      const made = await store.create(obj);
      if (AUDITED_KINDS.has(kindOf(obj))) await record({ verb: 'create', kind: kindOf(obj), namespace: made.metadata.namespace, name: made.metadata.name, from: null, to: made });
      return made;
    },
    update: <T extends AnyResource>(obj: T) => changed(obj, 'update', () => store.update(obj)),
    updateStatus: <T extends AnyResource>(obj: T) => changed(obj, 'update-status', () => store.updateStatus(obj)),
    async delete(kind, name, opts) {
      if (!AUDITED_KINDS.has(kind)) return store.delete(kind, name, opts);
      const old = await before(kind, name, opts?.namespace);
      await store.delete(kind, name, opts);
      await record({ verb: 'delete', kind, namespace: old?.metadata.namespace ?? opts?.namespace ?? '', name, from: old ?? null, to: null });
    },
  };
}

/** The store's methods bound to it, so the wrapper can override some and pass the rest on. */
function bindAll(store: ResourceStore): ResourceStore {
  return {
    get: store.get.bind(store),
    list: store.list.bind(store),
    watch: store.watch.bind(store),
    create: store.create.bind(store),
    update: store.update.bind(store),
    updateStatus: store.updateStatus.bind(store),
    delete: store.delete.bind(store),
    health: store.health.bind(store),
    close: store.close.bind(store),
  } as ResourceStore;
}
