import type { Kind, ResourceByKind } from '../api/v1alpha1/index.ts';
import type { Logger } from '../lib/logger.ts';
import type { ResourceStore } from '../store/types.ts';
import { Informer } from './informer.ts';

/** Secondary indexes of one kind: name → the index values of an object. */
export type Indexers<K extends Kind> = Record<string, (obj: ResourceByKind[K]) => readonly string[]>;
/** Indexes per kind, as a controller declares them. */
export type IndexersByKind = { readonly [K in Kind]?: Readonly<Indexers<K>> };

/** What a reader of the shared caches needs: the one informer of a kind. */
export interface CacheReader {
  /** The shared informer of `kind`: created on first ask, started if the cache runs. */
  informerFor<K extends Kind>(kind: K): Informer<K>;
}

/**
 * Merges the indexes several owners declare, per kind. Two owners defining the same index of the same kind is a
 * mistake (one would read the other's values), so it throws; the same name on two kinds is fine.
 */
export function mergeIndexers(declared: readonly { owner: string; indexers?: IndexersByKind | undefined }[]): IndexersByKind {
  const merged: Partial<Record<Kind, Record<string, unknown>>> = {};
  for (const { owner, indexers } of declared) {
    for (const [kind, byName] of Object.entries(indexers ?? {}) as [Kind, Record<string, unknown>][]) {
      const into = (merged[kind] ??= {});
      for (const [name, fn] of Object.entries(byName)) {
        if (name in into) throw new Error(`${owner}: index ${name} of ${kind} is already defined by another controller`);
        into[name] = fn;
      }
    }
  }
  return merged as IndexersByKind;
}

export interface InformerCacheOptions {
  store: ResourceStore;
  namespace: string;
  /** The indexes of each kind's informer (fixed: an index must hold every object from the first list). */
  indexers?: IndexersByKind;
  /** Every informer's relist period (default 10 min). */
  relistPeriodMs?: number;
  logger?: Logger;
}

/**
 * controller-runtime's cache: one informer per kind, created when first asked for and shared by every reader,
 * so two controllers reading ApiClients hold one list + watch between them, not two. Informers asked for before
 * start() start with it; later ones start at once (their reader waits for their sync).
 */
export class InformerCache implements CacheReader {
  private readonly informers = new Map<Kind, Informer<Kind>>();
  private started = false;
  private stopped = false;

  constructor(private readonly opts: InformerCacheOptions) {}

  informerFor<K extends Kind>(kind: K): Informer<K> {
    if (this.stopped) throw new Error(`the cache is stopped: no informer of ${kind}`);
    let informer = this.informers.get(kind) as Informer<K> | undefined;
    if (!informer) {
      informer = new Informer<K>({
        store: this.opts.store,
        kind,
        namespace: this.opts.namespace,
        relistPeriodMs: this.opts.relistPeriodMs ?? 10 * 60_000,
        indexers: { ...(this.opts.indexers?.[kind] as Indexers<K> | undefined) },
        ...(this.opts.logger && { logger: this.opts.logger }),
      });
      this.informers.set(kind, informer as unknown as Informer<Kind>);
      if (this.started) informer.start();
    }
    return informer;
  }

  /** The kinds with an informer so far. */
  kinds(): Kind[] {
    return [...this.informers.keys()];
  }

  /** Starts every informer asked for so far, and each one asked for later. */
  start(): void {
    this.started = true;
    for (const informer of this.informers.values()) informer.start();
  }

  /** Resolves once every informer asked for so far has filled its cache. */
  async waitForSync(): Promise<void> {
    await Promise.all([...this.informers.values()].map((i) => i.waitForSync()));
  }

  /** Stops every informer; the cache gives out no new ones. */
  async stop(): Promise<void> {
    this.stopped = true;
    await Promise.all([...this.informers.values()].map((i) => i.stop()));
  }
}
