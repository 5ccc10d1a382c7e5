import type { KubeConfig } from '@kubernetes/client-node';
import type { AnyResource, Kind, ResourceByKind } from '../../api/v1alpha1/index.ts';
import { stderrLogger, type Logger } from '../../lib/logger.ts';
import {
  StoreError,
  isStoreError,
  type DeleteOptions,
  type ListOptions,
  type ListResult,
  type ResourceStore,
  type StoreHealth,
  type WatchEvent,
  type WatchHandle,
  type WatchOptions,
} from '../types.ts';
import { createKubeClient, type KubeClient } from './client.ts';
import { decode, encode, kindOf, resourceOf } from './codec.ts';
import { toStoreError, type RequestContext } from './errors.ts';
import { KubeWatch, type WatchTimings } from './watch.ts';

export interface KubeStoreOptions {
  kubeConfig: KubeConfig;
  /**
   * The namespace of calls that name none: get/delete without one, objects without metadata.namespace, and
   * every list and watch without one. Lists and watches never span namespaces: the service's RBAC is a
   * namespaced Role, as least privilege wants (the embedded store lists all namespaces instead).
   */
  namespace: string;
  logger?: Logger;
  /** Deadline of each request (default 15 s). */
  requestTimeoutMs?: number;
  /**
   * Default: the server ends each watch request after 30–36 s; 46 s without a byte means a dead connection
   * (about what client-go's HTTP/2 pings take to notice one: 30 s idle + 15 s ping timeout).
   */
  watch?: Partial<WatchTimings>;
  /** Objects per list request (default 500); a list pages through with `continue`, like client-go's pager. */
  listPageSize?: number;
}

export interface KubeStore extends ResourceStore {
  readonly namespace: string;
}

/** How often an update without resourceVersion re-reads and retries when a concurrent write wins the race. */
const UNCONDITIONAL_ATTEMPTS = 5;

/**
 * The ResourceStore on a real API server (custom resources of agentwallet.dev/v1alpha1, CRDs in crds/).
 * The API server already has the interface's semantics (resourceVersion preconditions, generation, the
 * status subresource, AlreadyExists vs Conflict, 410 Gone); this maps them, and smooths three differences:
 * an update without resourceVersion (the API server refuses it for custom resources) re-reads and retries;
 * a watch without resourceVersion starts from now (the API server would replay every object first); and
 * the API server's version numbers are etcd revisions, so they are not dense.
 */
export function createKubeStore(opts: KubeStoreOptions): KubeStore {
  return new Kube(opts);
}

class Kube implements KubeStore {
  readonly namespace: string;
  private readonly client: KubeClient;
  private readonly log: Logger;
  private readonly timings: WatchTimings;
  private readonly pageSize: number;
  private readonly watches = new Set<KubeWatch<Kind>>();
  private closed = false;
  private closedAt = '';
  /** Set while requests fail with Unavailable (the API server unreachable or refusing), from the first one. */
  private failing: { reason: string; since: string } | undefined;

  constructor(opts: KubeStoreOptions) {
    this.namespace = opts.namespace;
    this.client = createKubeClient(opts.kubeConfig, {
      ...(opts.requestTimeoutMs !== undefined && { requestTimeoutMs: opts.requestTimeoutMs }),
    });
    this.log = opts.logger ?? stderrLogger;
    const serverTimeoutSeconds = opts.watch?.serverTimeoutSeconds ?? 30;
    this.timings = {
      serverTimeoutSeconds,
      // Past the longest jittered server timeout, plus slack for a slow close.
      inactivityMs: opts.watch?.inactivityMs ?? Math.round(serverTimeoutSeconds * 1.2 * 1000 + 10_000),
    };
    this.pageSize = opts.listPageSize ?? 500;
  }

  async get<K extends Kind>(kind: K, name: string, namespace = this.namespace): Promise<ResourceByKind[K]> {
    const what = `${kind} ${namespace}/${name}`;
    const raw = await this.call({ verb: 'get', what }, () =>
      this.client.customObjects.getNamespacedCustomObject({ ...resourceOf(this.kind(kind)), namespace, name }),
    );
    return decode(kind, raw);
  }

  async list<K extends Kind>(kind: K, opts: ListOptions = {}): Promise<ListResult<ResourceByKind[K]>> {
    const { items, resourceVersion } = await this.listRaw(this.kind(kind), opts.namespace ?? this.namespace, opts.labelSelector);
    const out: ResourceByKind[K][] = [];
    for (const raw of items) {
      try {
        out.push(decode(kind, raw));
      } catch (err) {
        // Left out rather than failing the list: one malformed object must not blind every informer.
        this.log.error({ kind, err }, 'kube store: object left out of a list: it does not match its schema');
      }
    }
    return { items: out, resourceVersion };
  }

  /** Every page of a list, and the resourceVersion of the first (the snapshot the pages all come from). */
  private async listRaw(
    kind: Kind,
    namespace: string,
    selector: Record<string, string> | undefined,
    limit?: number,
  ): Promise<{ items: unknown[]; resourceVersion: string }> {
    const labelSelector = selectorString(selector);
    const items: unknown[] = [];
    let resourceVersion: string | undefined;
    let cont: string | undefined;
    do {
      const page = (await this.call({ verb: 'list', what: `${kind} in ${namespace}` }, () =>
        this.client.customObjects.listNamespacedCustomObject({
          ...resourceOf(kind),
          namespace,
          limit: limit ?? this.pageSize,
          ...(labelSelector !== undefined && { labelSelector }),
          ...(cont !== undefined && { _continue: cont }),
        }),
      )) as { items?: unknown[]; metadata?: { resourceVersion?: string; continue?: string } };
      resourceVersion ??= page.metadata?.resourceVersion;
      items.push(...(page.items ?? []));
      cont = limit === undefined && page.metadata?.continue ? page.metadata.continue : undefined;
    } while (cont !== undefined);
    if (resourceVersion === undefined) throw new StoreError('Unavailable', `list ${kind}: the API server sent no resourceVersion`);
    return { items, resourceVersion };
  }

  watch<K extends Kind>(kind: K, opts: WatchOptions, onEvent: (event: WatchEvent<ResourceByKind[K]>) => void): WatchHandle {
    this.assertOpen();
    this.kind(kind);
    const namespace = opts.namespace ?? this.namespace;
    const from = opts.resourceVersion;
    const startFrom = async (deliver: (event: WatchEvent<ResourceByKind[K]>) => void): Promise<string> => {
      if (from === '0') {
        // The API server's own "0" serves from its cache, which may lag; a list is exact, then the watch
        // continues from the list's version, as the embedded store's "0" does.
        const { items, resourceVersion } = await this.listRaw(kind, namespace, opts.labelSelector);
        for (const raw of items) deliver({ type: 'ADDED', object: decode(kind, raw) });
        return resourceVersion;
      }
      if (from !== undefined && from !== '') return from;
      // "From now": the current version, from the cheapest list there is.
      return (await this.listRaw(kind, namespace, undefined, 1)).resourceVersion;
    };
    const w: KubeWatch<K> = new KubeWatch<K>({
      client: this.client,
      kind,
      namespace,
      labelSelector: selectorString(opts.labelSelector),
      resourceVersion: startFrom,
      timings: this.timings,
      logger: this.log,
      onEvent,
      onEnd: () => this.watches.delete(w as unknown as KubeWatch<Kind>),
    });
    this.watches.add(w as unknown as KubeWatch<Kind>);
    return w;
  }

  async create<T extends AnyResource>(obj: T): Promise<T> {
    const kind = kindOf(obj);
    const namespace = obj.metadata?.namespace || this.namespace;
    const what = `${kind} ${namespace}/${obj.metadata?.name ?? '?'}`;
    if (obj.metadata?.resourceVersion) {
      // The API server answers this with a 500; it is the caller's mistake, as the embedded store says.
      throw new StoreError('Invalid', `${what}: metadata.resourceVersion must not be set on objects to be created`);
    }
    const body = encode(kind, { ...obj, metadata: { ...obj.metadata, namespace } }, 'all');
    const raw = await this.call({ verb: 'create', what }, () =>
      this.client.customObjects.createNamespacedCustomObject({ ...resourceOf(kind), namespace, body }),
    );
    return decode(kind, raw) as T;
  }

  update<T extends AnyResource>(obj: T): Promise<T> {
    return this.replace(obj, 'spec');
  }

  updateStatus<T extends AnyResource>(obj: T): Promise<T> {
    return this.replace(obj, 'status');
  }

  private async replace<T extends AnyResource>(obj: T, part: 'spec' | 'status'): Promise<T> {
    const kind = kindOf(obj);
    const namespace = obj.metadata?.namespace || this.namespace;
    const name = obj.metadata?.name;
    const what = `${kind} ${namespace}/${name ?? '?'}`;
    if (!name) throw new StoreError('Invalid', `${what}: metadata.name is required`);
    // uid: the API server would refuse a body whose uid differs (the embedded store ignores it); the
    // resourceVersion precondition already tells a recreated object from the one the caller read.
    const { uid: _uid, ...metadata } = obj.metadata;
    const body = encode(kind, { ...obj, metadata: { ...metadata, namespace } } as AnyResource, part);
    const send = (b: AnyResource) =>
      this.call({ verb: part === 'status' ? 'update status of' : 'update', what }, () => {
        const params = { ...resourceOf(kind), namespace, name, body: b };
        return part === 'status'
          ? this.client.customObjects.replaceNamespacedCustomObjectStatus(params)
          : this.client.customObjects.replaceNamespacedCustomObject(params);
      });
    if (body.metadata.resourceVersion) return decode(kind, await send(body)) as T;
    // No resourceVersion: an unconditional write, which the interface allows and the API server refuses for
    // custom resources. Write over the current version; if another write lands in between, read again.
    for (let attempt = 1; ; attempt++) {
      const current = await this.get(kind, name, namespace);
      try {
        const raw = await send({ ...body, metadata: { ...body.metadata, resourceVersion: current.metadata.resourceVersion } } as AnyResource);
        return decode(kind, raw) as T;
      } catch (e) {
        if (!isStoreError(e, 'Conflict') || attempt >= UNCONDITIONAL_ATTEMPTS) throw e;
      }
    }
  }

  async delete(kind: Kind, name: string, opts: DeleteOptions = {}): Promise<void> {
    const namespace = opts.namespace ?? this.namespace;
    const resourceVersion = opts.preconditions?.resourceVersion;
    await this.call({ verb: 'delete', what: `${kind} ${namespace}/${name}` }, () =>
      this.client.customObjects.deleteNamespacedCustomObject({
        ...resourceOf(this.kind(kind)),
        namespace,
        name,
        ...(resourceVersion !== undefined && { body: { preconditions: { resourceVersion } } }),
      }),
    );
  }

  async close(): Promise<void> {
    if (this.closed) return;
    this.closed = true;
    this.closedAt = new Date().toISOString();
    for (const w of [...this.watches]) w.fail(new StoreError('Unavailable', 'kube store is closed'));
    this.client.close();
  }

  /** From the outcome of the last request: any answer of the API server but an Unavailable one is healthy. */
  health(): StoreHealth {
    if (this.closed) return { writable: false, reason: 'kube store is closed', since: this.closedAt, recovering: false };
    return this.failing === undefined ? { writable: true } : { writable: false, ...this.failing, recovering: true };
  }

  private kind<K extends Kind>(kind: K): K {
    kindOf({ kind });
    return kind;
  }

  private assertOpen(): void {
    if (this.closed) throw new StoreError('Unavailable', 'kube store is closed');
  }

  private async call<R>(ctx: RequestContext, fn: () => Promise<R>): Promise<R> {
    this.assertOpen();
    let result: R;
    try {
      result = await fn();
    } catch (e) {
      const error = toStoreError(e, ctx);
      const since = this.failing?.since ?? new Date().toISOString();
      this.failing = error.code === 'Unavailable' ? { reason: error.message, since } : undefined;
      throw error;
    }
    this.failing = undefined;
    return result;
  }
}

/** An equality selector as the API server takes it (`a=b,c=d`); undefined when there is nothing to select. */
function selectorString(selector: Record<string, string> | undefined): string | undefined {
  const parts = Object.entries(selector ?? {}).map(([k, v]) => `${k}=${v}`);
  return parts.length > 0 ? parts.join(',') : undefined;
}
