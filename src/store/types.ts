import { KINDS, knownKind, type AnyResource, type Kind, type ResourceByKind } from '../api/v1alpha1/index.ts';
import { AgentWalletError } from '../lib/errors.ts';

/**
 * The resource store: the subset of the Kubernetes API server's semantics the controllers rely on.
 * Two backends implement it (embedded, durable single process; and kube, the real API server), and the same
 * scenario tests run against both, so every rule below must hold for both:
 *
 * - resourceVersion is an opaque string, changed by every write; it orders events of a watch.
 * - create fails with AlreadyExists if the name is taken (create-if-absent is the single-use primitive).
 * - update replaces metadata (labels, annotations, finalizers) and spec, bumping generation when spec
 *   changes; status in the body is ignored. updateStatus replaces status only and never bumps generation.
 *   Both fail with Conflict when the body's resourceVersion is not the stored one (optimistic concurrency).
 * - delete with a resourceVersion precondition fails with Conflict when it does not match.
 * - watch delivers ADDED / MODIFIED / DELETED after the given resourceVersion, in order, each object at most
 *   once per change; if that version is too old it fails with Gone (410) and the caller must re-list.
 * - health() is { writable: true } while writes succeed; after close it is not writable and not recovering.
 */
export type StoreErrorCode = 'NotFound' | 'AlreadyExists' | 'Conflict' | 'Gone' | 'Invalid' | 'Unavailable';

export class StoreError extends AgentWalletError<StoreErrorCode> {
  override readonly name = 'StoreError';
}
export const isStoreError = (e: unknown, code?: StoreErrorCode): e is StoreError =>
  e instanceof StoreError && (code === undefined || e.code === code);

/** The kind of an object given to a store, or Invalid: what both backends check first. */
export function kindOf(obj: unknown): Kind {
  const kind = knownKind(obj);
  if (kind === undefined) {
    const given = (obj as { kind?: unknown } | null)?.kind;
    throw new StoreError('Invalid', `unknown kind ${JSON.stringify(given)}; expected one of ${KINDS.join(', ')}`);
  }
  return kind;
}

export function assertKind(kind: unknown): asserts kind is Kind {
  kindOf({ kind });
}

export interface ListOptions {
  namespace?: string;
  /** Equality selector only: every given label must match. */
  labelSelector?: Record<string, string>;
}

export interface ListResult<T> {
  items: T[];
  /** Start a watch from here to see every change after this list. */
  resourceVersion: string;
}

export type WatchEventType = 'ADDED' | 'MODIFIED' | 'DELETED';
export interface WatchEvent<T> {
  type: WatchEventType;
  object: T;
}

export interface WatchOptions extends ListOptions {
  /** Deliver changes after this version; omitted means "from now". */
  resourceVersion?: string;
}

export interface WatchHandle {
  stop(): void;
  /** Settles when the watch ends: resolves on stop(), rejects with StoreError (Gone, Unavailable) otherwise. */
  readonly done: Promise<void>;
}

export interface DeleteOptions {
  namespace?: string;
  preconditions?: { resourceVersion?: string };
}

/**
 * Whether the store can take writes now, for health endpoints: a store that cannot write answers every write
 * with Unavailable, and the service should say so (GET /health: 503 with the reason) rather than "ok".
 */
export type StoreHealth =
  | { writable: true }
  | {
      writable: false;
      /** What failed, e.g. "ENOSPC: no space left on device, write" or "connect ECONNREFUSED 10.0.0.1:6443". */
      reason: string;
      /** When writes started failing (ISO 8601). */
      since: string;
      /**
       * true: the store retries by itself and writes resume once the cause is gone (space freed, API server
       * back). false: it has stopped for good (closed, or its data on disk is not what it acknowledged); the
       * process should exit so that its supervisor restarts it.
       */
      recovering: boolean;
    };

export interface ResourceStore {
  get<K extends Kind>(kind: K, name: string, namespace?: string): Promise<ResourceByKind[K]>; // NotFound
  list<K extends Kind>(kind: K, opts?: ListOptions): Promise<ListResult<ResourceByKind[K]>>;
  watch<K extends Kind>(
    kind: K,
    opts: WatchOptions,
    onEvent: (event: WatchEvent<ResourceByKind[K]>) => void,
  ): WatchHandle;
  /** Writes take the object itself; its `kind` picks the collection and the result has the same type. */
  create<T extends AnyResource>(obj: T): Promise<T>; // AlreadyExists
  update<T extends AnyResource>(obj: T): Promise<T>; // Conflict, NotFound
  updateStatus<T extends AnyResource>(obj: T): Promise<T>; // Conflict, NotFound
  delete(kind: Kind, name: string, opts?: DeleteOptions): Promise<void>; // NotFound, Conflict
  /** Whether writes can succeed now, as far as the store knows (it does no I/O to answer). */
  health(): StoreHealth;
  /** Flushes and releases resources. */
  close(): Promise<void>;
}
