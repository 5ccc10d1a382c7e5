import { randomUUID } from 'node:crypto';
import { promises as fs } from 'node:fs';
import { KINDS, type AnyResource, type Kind, type ResourceByKind } from '../../api/v1alpha1/index.ts';
import {
  StoreError,
  type DeleteOptions,
  type ListOptions,
  type ListResult,
  type ResourceStore,
  type WatchEvent,
  type WatchEventType,
  type WatchHandle,
  type WatchOptions,
} from '../types.ts';
import {
  assertKind,
  identityOf,
  kindOf,
  prepareCreate,
  prepareDelete,
  prepareStatusUpdate,
  prepareUpdate,
  type Change,
} from './admission.ts';
import { fsyncDir } from '../../lib/fs.ts';
import { acquireStoreLock, canonicalDir, type StoreLock } from './lock.ts';
import { DEFAULT_NAMESPACE, matchesLabels } from '../../api/v1alpha1/names.ts';
import { readSnapshot, removeSnapshotLeftovers, writeSnapshot } from './snapshot.ts';
import { WatchHub, type ChangeEvent } from './watch.ts';
import { WalWriter, encodeRecord, listSegments, readSegment, truncateSegment, type WalWriterStats } from './wal.ts';

export interface EmbeddedStoreOptions {
  /** The directory the store owns (created if missing). */
  dir: string;
  /** fdatasync each batch before acknowledging it (default true). Off only for throwaway stores. */
  fsync?: boolean;
  /** Recent events kept for watches from a resourceVersion (default 50,000). */
  historyLimit?: number;
  /** Compact when the log since the last snapshot exceeds this many bytes (default 64 MiB). */
  compactAfterBytes?: number;
  /** Also compact on this period if anything was logged since the last snapshot (default 10 min; 0 = never). */
  compactIntervalMs?: number;
  /** Where errors of background compaction go (they are not fatal: the log still holds everything). */
  onBackgroundError?: (error: unknown) => void;
}

export interface EmbeddedStoreStats {
  /** Latest durable revision. */
  revision: number;
  objects: number;
  watches: number;
  wal: WalWriterStats & { segmentStartRevision: number; bytesSinceSnapshot: number };
  snapshots: number;
  lastSnapshotRevision: number;
}

/** A durable, single-process ResourceStore; see docs/adr/0001-embedded-store.md. */
export interface EmbeddedStore extends ResourceStore {
  /** The store's directory, as a canonical absolute path. */
  readonly dir: string;
  /** The latest durable revision (what a list would return as resourceVersion). */
  currentRevision(): string;
  /** Writes a snapshot now and drops the log it covers. */
  compact(): Promise<void>;
  stats(): EmbeddedStoreStats;
}

/** A stored object, kept serialized: every read parses its own deep copy. */
interface Entry {
  json: string;
  namespace: string;
  labels: Readonly<Record<string, string>> | undefined;
}

interface Mutation {
  line: string;
  rev: number;
  type: WatchEventType;
  kind: Kind;
  key: string;
  entry: Entry;
  prevLabels: Readonly<Record<string, string>> | undefined;
  resolve: (obj: AnyResource) => void;
  reject: (e: unknown) => void;
}

const keyOf = (namespace: string, name: string): string => `${namespace}/${name}`;

/**
 * Opens the store in `dir`: takes the lock, loads the snapshot, replays the log (ignoring a torn last
 * line), and starts appending. Fails with StoreError Unavailable if another live process owns the directory.
 */
export async function openEmbeddedStore(opts: EmbeddedStoreOptions): Promise<EmbeddedStore> {
  await fs.mkdir(opts.dir, { recursive: true });
  const dir = await canonicalDir(opts.dir);
  const lock = await acquireStoreLock(dir);
  try {
    return await Embedded.open(dir, lock, opts);
  } catch (e) {
    await lock.release().catch(() => undefined);
    throw e;
  }
}

class Embedded implements EmbeddedStore {
  private readonly objects = new Map<Kind, Map<string, Entry>>(KINDS.map((k) => [k, new Map()]));
  /** Keys with a write appended to the log but not yet committed, and the revision of that write. */
  private readonly inFlight = new Map<string, number>();
  private committedRev: number;
  private assignedRev: number;
  private commitWaiters: { rev: number; resolve: () => void; reject: (e: unknown) => void }[] = [];
  private wal!: WalWriter<Mutation>;
  private readonly hub: WatchHub;
  private failure: StoreError | undefined;
  private closing: Promise<void> | undefined;
  private compacting: Promise<void> | undefined;
  private bytesSinceSnapshot = 0;
  private snapshots = 0;
  private lastSnapshotRev: number;
  private timer: NodeJS.Timeout | undefined;

  private constructor(
    readonly dir: string,
    private readonly lock: StoreLock,
    private readonly opts: EmbeddedStoreOptions,
    snapshotRev: number,
  ) {
    this.committedRev = snapshotRev;
    this.assignedRev = snapshotRev;
    this.lastSnapshotRev = snapshotRev;
    this.hub = new WatchHub(opts.historyLimit ?? 50_000, snapshotRev);
  }

  static async open(dir: string, lock: StoreLock, opts: EmbeddedStoreOptions): Promise<Embedded> {
    await removeSnapshotLeftovers(dir);
    const snapshot = await readSnapshot(dir);
    const store = new Embedded(dir, lock, opts, snapshot?.revision ?? 0);
    for (const obj of snapshot?.objects ?? []) {
      const kind = kindOf(obj);
      store.objects.get(kind)!.set(keyOf(obj.metadata.namespace, obj.metadata.name), toEntry(obj));
    }
    const replayed = await store.replayLog();
    const segments = await listSegments(dir);
    const last = segments.at(-1);
    const startRev = last?.startRev ?? store.committedRev + 1;
    store.wal = await WalWriter.open<Mutation>(dir, startRev, {
      fsync: opts.fsync ?? true,
      onCommit: (batch) => store.commit(batch),
      onFail: (e, lost) => store.fail(e, lost),
    });
    // Only the last historyLimit events are kept: the history reaches back to just before the first of them.
    store.hub.seed(replayed, replayed[0] ? replayed[0].rev - 1 : store.committedRev);
    const interval = opts.compactIntervalMs ?? 600_000;
    if (interval > 0) {
      store.timer = setInterval(() => {
        if (store.bytesSinceSnapshot > 0) store.compactInBackground();
      }, interval);
      store.timer.unref();
    }
    if (store.bytesSinceSnapshot > (opts.compactAfterBytes ?? 64 << 20)) store.compactInBackground();
    return store;
  }

  /** Applies every logged record after the snapshot; returns them as events to seed the watch history. */
  private async replayLog(): Promise<ChangeEvent[]> {
    const segments = await listSegments(this.dir);
    const events: ChangeEvent[] = [];
    const limit = this.opts.historyLimit ?? 50_000;
    for (const [i, seg] of segments.entries()) {
      const contents = await readSegment(seg.path);
      if (contents.tornBytes > 0) {
        if (i !== segments.length - 1) {
          throw new Error(`write-ahead log ${seg.path} has a bad tail but is not the last segment`);
        }
        // The crashed process's last write: never acknowledged, so it is dropped.
        await truncateSegment(seg.path, contents.goodBytes);
      }
      this.bytesSinceSnapshot += contents.goodBytes;
      for (const rec of contents.records) {
        if (rec.rev <= this.committedRev) continue;
        const map = this.objects.get(rec.kind);
        if (map === undefined) throw new Error(`${seg.path}: record of unknown kind ${rec.kind}`);
        const key = keyOf(rec.namespace, rec.name);
        const entry = toEntry(rec.object);
        const prevLabels = map.get(key)?.labels;
        if (rec.type === 'DELETED') map.delete(key);
        else map.set(key, entry);
        this.committedRev = rec.rev;
        events.push(changeEvent(rec.rev, rec.type, rec.kind, entry, prevLabels));
        if (events.length > 2 * limit) events.splice(0, events.length - limit);
      }
    }
    this.assignedRev = this.committedRev;
    return events.slice(-limit);
  }

  // ---- reads: committed state only, so nothing is seen before it is durable ----

  async get<K extends Kind>(kind: K, name: string, namespace = DEFAULT_NAMESPACE): Promise<ResourceByKind[K]> {
    this.assertReadable();
    assertKind(kind);
    const entry = this.objects.get(kind)!.get(keyOf(namespace, name));
    if (entry === undefined) throw notFound(kind, namespace, name);
    return JSON.parse(entry.json) as ResourceByKind[K];
  }

  async list<K extends Kind>(kind: K, opts: ListOptions = {}): Promise<ListResult<ResourceByKind[K]>> {
    this.assertReadable();
    assertKind(kind);
    const items: ResourceByKind[K][] = [];
    for (const entry of this.objects.get(kind)!.values()) {
      if (opts.namespace !== undefined && entry.namespace !== opts.namespace) continue;
      if (!matchesLabels(entry.labels, opts.labelSelector)) continue;
      items.push(JSON.parse(entry.json) as ResourceByKind[K]);
    }
    return { items, resourceVersion: String(this.committedRev) };
  }

  /**
   * From a resourceVersion: the changes after it (Gone if the history no longer reaches back that far).
   * Without one: changes from now. From "0": an ADDED for every current object, then changes, as the API
   * server does.
   */
  watch<K extends Kind>(
    kind: K,
    opts: WatchOptions,
    onEvent: (event: WatchEvent<ResourceByKind[K]>) => void,
  ): WatchHandle {
    this.assertReadable();
    assertKind(kind);
    return this.hub.watch(kind, opts, onEvent as (event: WatchEvent<never>) => void, () => {
      const events: ChangeEvent[] = [];
      for (const entry of this.objects.get(kind)!.values()) {
        events.push(changeEvent(this.committedRev, 'ADDED', kind, entry, undefined));
      }
      return events;
    });
  }

  currentRevision(): string {
    return String(this.committedRev);
  }

  // ---- writes: decided against committed state, acknowledged once on disk ----

  async create<T extends AnyResource>(obj: T): Promise<T> {
    const kind = kindOf(obj);
    const { namespace, name } = identityOf(obj);
    const key = keyOf(namespace, name);
    for (let w = this.busy(kind, key); w; w = this.busy(kind, key)) await w;
    if (this.objects.get(kind)!.has(key)) {
      throw new StoreError('AlreadyExists', `${kind} ${namespace}/${name} already exists`, {
        details: { kind, namespace, name },
      });
    }
    const next = prepareCreate(kind, { ...obj, metadata: { ...obj.metadata, namespace } }, randomUUID(), new Date());
    return (await this.write(kind, key, 'ADDED', next)) as T;
  }

  async update<T extends AnyResource>(obj: T): Promise<T> {
    return this.modify(obj, prepareUpdate) as Promise<T>;
  }

  async updateStatus<T extends AnyResource>(obj: T): Promise<T> {
    return this.modify(obj, prepareStatusUpdate) as Promise<T>;
  }

  private async modify(
    obj: AnyResource,
    prepare: (kind: Kind, current: AnyResource, obj: AnyResource) => Change,
  ): Promise<AnyResource> {
    const kind = kindOf(obj);
    const { namespace, name } = identityOf(obj);
    const key = keyOf(namespace, name);
    for (let w = this.busy(kind, key); w; w = this.busy(kind, key)) await w;
    const entry = this.objects.get(kind)!.get(key);
    if (entry === undefined) throw notFound(kind, namespace, name);
    const current = JSON.parse(entry.json) as AnyResource;
    const expected = obj.metadata.resourceVersion;
    // An update without resourceVersion is unconditional (the contract allows it; the kube backend emulates it
    // with read-then-write, since the API server refuses such updates for custom resources).
    if (expected !== undefined && expected !== '' && expected !== current.metadata.resourceVersion) {
      throw conflict(kind, namespace, name);
    }
    const change = prepare(kind, current, obj);
    if (change.type === 'UNCHANGED') return current;
    return this.write(kind, key, change.type, change.object);
  }

  async delete(kind: Kind, name: string, opts: DeleteOptions = {}): Promise<void> {
    assertKind(kind);
    const namespace = opts.namespace ?? DEFAULT_NAMESPACE;
    const key = keyOf(namespace, name);
    for (let w = this.busy(kind, key); w; w = this.busy(kind, key)) await w;
    const entry = this.objects.get(kind)!.get(key);
    if (entry === undefined) throw notFound(kind, namespace, name);
    const current = JSON.parse(entry.json) as AnyResource;
    const expected = opts.preconditions?.resourceVersion;
    if (expected !== undefined && expected !== current.metadata.resourceVersion) throw conflict(kind, namespace, name);
    const change = prepareDelete(current, new Date());
    if (change.type !== 'UNCHANGED') await this.write(kind, key, change.type, change.object);
  }

  /**
   * A promise for the in-flight write to this key, if there is one. Writers loop on it until the key is
   * idle and then decide synchronously, so every decision (exists? which version?) is taken against durable
   * state and nothing can slip in between the check and the append: nobody is told AlreadyExists or Conflict
   * because of a write a crash could still undo. Writes to different keys never wait for each other.
   */
  private busy(kind: Kind, key: string): Promise<void> | undefined {
    this.assertWritable();
    const rev = this.inFlight.get(`${kind}/${key}`);
    return rev === undefined ? undefined : this.committed(rev);
  }

  /** Assigns the next revision and appends; resolves with the stored object once it is durable. */
  private write(kind: Kind, key: string, type: WatchEventType, object: AnyResource): Promise<AnyResource> {
    this.assertWritable();
    const rev = ++this.assignedRev;
    object.metadata.resourceVersion = String(rev);
    const json = JSON.stringify(object);
    const entry = toEntry(object, json);
    const prevLabels = this.objects.get(kind)!.get(key)?.labels;
    const { namespace, name } = object.metadata;
    const line = encodeRecord(rev, type, kind, namespace, name, json);
    this.inFlight.set(`${kind}/${key}`, rev);
    return new Promise<AnyResource>((resolve, reject) => {
      this.wal.append({ line, rev, type, kind, key, entry, prevLabels, resolve, reject });
    });
  }

  /** A batch is on disk: apply it, tell the watches, then acknowledge the writers. */
  private commit(batch: Mutation[]): void {
    const events: ChangeEvent[] = [];
    for (const m of batch) {
      const map = this.objects.get(m.kind)!;
      if (m.type === 'DELETED') map.delete(m.key);
      else map.set(m.key, m.entry);
      const flightKey = `${m.kind}/${m.key}`;
      if (this.inFlight.get(flightKey) === m.rev) this.inFlight.delete(flightKey);
      this.committedRev = m.rev;
      this.bytesSinceSnapshot += m.line.length;
      events.push(changeEvent(m.rev, m.type, m.kind, m.entry, m.prevLabels));
    }
    this.hub.publish(events);
    for (const m of batch) m.resolve(JSON.parse(m.entry.json) as AnyResource);
    if (this.commitWaiters.length > 0) {
      const ready = this.commitWaiters.filter((w) => w.rev <= this.committedRev);
      this.commitWaiters = this.commitWaiters.filter((w) => w.rev > this.committedRev);
      for (const w of ready) w.resolve();
    }
    if (this.bytesSinceSnapshot > (this.opts.compactAfterBytes ?? 64 << 20)) this.compactInBackground();
  }

  /**
   * A write or sync failed: what reached the disk is unknown (PostgreSQL's fsync lesson: retrying a failed
   * fsync can report success for lost data). The store stops; reopening replays whatever is really there.
   */
  private fail(cause: unknown, lost: Mutation[]): void {
    this.failure = new StoreError('Unavailable', `store at ${this.dir} failed to write its log; reopen it`, { cause });
    for (const m of lost) m.reject(this.failure);
    for (const w of this.commitWaiters.splice(0)) w.reject(this.failure);
    this.inFlight.clear();
    this.hub.endAll(this.failure);
  }

  private committed(rev: number): Promise<void> {
    if (rev <= this.committedRev) return Promise.resolve();
    return new Promise((resolve, reject) => this.commitWaiters.push({ rev, resolve, reject }));
  }

  // ---- compaction ----

  compact(): Promise<void> {
    this.assertWritable();
    this.compacting ??= this.runCompaction().finally(() => {
      this.compacting = undefined;
    });
    return this.compacting;
  }

  private compactInBackground(): void {
    if (this.compacting || this.closing || this.failure) return;
    this.compact().catch((e) => (this.opts.onBackgroundError ?? defaultBackgroundError)(e));
  }

  /**
   * Rotates the log at a batch boundary, capturing the committed state at that revision; writes it as the
   * snapshot while new writes go to the new segment; then deletes the segments the snapshot covers.
   */
  private async runCompaction(): Promise<void> {
    let revision = 0;
    let objects: string[] = [];
    const boundary = await this.wal.rotate(() => {
      revision = this.committedRev;
      objects = [];
      for (const map of this.objects.values()) for (const e of map.values()) objects.push(e.json);
      this.bytesSinceSnapshot = 0;
      return revision + 1;
    });
    await writeSnapshot(this.dir, revision, objects);
    for (const seg of await listSegments(this.dir)) {
      if (seg.startRev < boundary) await fs.rm(seg.path, { force: true });
    }
    await fsyncDir(this.dir);
    this.snapshots++;
    this.lastSnapshotRev = revision;
  }

  stats(): EmbeddedStoreStats {
    let objects = 0;
    for (const map of this.objects.values()) objects += map.size;
    return {
      revision: this.committedRev,
      objects,
      watches: this.hub.watchCount,
      wal: {
        ...this.wal.stats,
        segmentStartRevision: this.wal.currentSegmentStartRev,
        bytesSinceSnapshot: this.bytesSinceSnapshot,
      },
      snapshots: this.snapshots,
      lastSnapshotRevision: this.lastSnapshotRev,
    };
  }

  // ---- lifecycle ----

  close(): Promise<void> {
    this.closing ??= (async () => {
      if (this.timer) clearInterval(this.timer);
      await this.compacting?.catch(() => undefined);
      await this.wal.close();
      this.hub.endAll(new StoreError('Unavailable', `store at ${this.dir} is closed`));
      await this.lock.release();
    })();
    return this.closing;
  }

  private assertReadable(): void {
    if (this.failure) throw this.failure;
    if (this.closing) throw new StoreError('Unavailable', `store at ${this.dir} is closed`);
  }

  private assertWritable(): void {
    this.assertReadable();
  }
}

function toEntry(obj: AnyResource, json = JSON.stringify(obj)): Entry {
  const labels = obj.metadata.labels;
  return { json, namespace: obj.metadata.namespace, labels: labels === undefined ? undefined : { ...labels } };
}

function changeEvent(
  rev: number,
  type: WatchEventType,
  kind: Kind,
  entry: Entry,
  prevLabels: Readonly<Record<string, string>> | undefined,
): ChangeEvent {
  return { rev, type, kind, namespace: entry.namespace, json: entry.json, labels: entry.labels, prevLabels };
}

const notFound = (kind: Kind, namespace: string, name: string) =>
  new StoreError('NotFound', `${kind} ${namespace}/${name} not found`, { details: { kind, namespace, name } });

const conflict = (kind: Kind, namespace: string, name: string) =>
  new StoreError(
    'Conflict',
    `${kind} ${namespace}/${name} was modified: the object has been modified; please apply your changes to the latest version and try again`,
    { details: { kind, namespace, name } },
  );

const defaultBackgroundError = (e: unknown) => console.error('embedded store: background compaction failed:', e);
