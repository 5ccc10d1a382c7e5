import { randomUUID } from 'node:crypto';
import { promises as fs } from 'node:fs';
import { join } from 'node:path';
import { KINDS, type AnyResource, type Kind, type ResourceByKind } from '../../api/v1alpha1/index.ts';
import {
  StoreError,
  type DeleteOptions,
  type ListOptions,
  type ListResult,
  type ResourceStore,
  type StoreHealth,
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
} from './admission.ts';
import { fsyncDir } from '../../lib/fs.ts';
import { ensurePrivateTree } from '../../lib/privateFs.ts';
import { acquireStoreLock, canonicalDir, type StoreLock } from './lock.ts';
import { DEFAULT_NAMESPACE, matchesLabels } from '../../api/v1alpha1/names.ts';
import { applyRecord, encodeDelete, encodePut, encodeStatus, recordKey } from './records.ts';
import { readSnapshot, removeSnapshotLeftovers, writeSnapshot } from './snapshot.ts';
import { WatchHub, type ChangeEvent } from './watch.ts';
import {
  PROBE_FILE,
  WalWriter,
  encodeLine,
  listSegments,
  scanSegment,
  truncateSegment,
  type LogFiles,
  type RecoveryResult,
  type SegmentTail,
  type WalWriterStats,
} from './wal.ts';

export interface EmbeddedStoreOptions {
  /** The directory the store owns (created if missing). */
  dir: string;
  /** fdatasync each batch before acknowledging it (default true). Off only for throwaway stores. */
  fsync?: boolean;
  /** Recent events kept for watches from a resourceVersion (default 50,000). */
  historyLimit?: number;
  /**
   * And at most this much of their objects' JSON beyond the newest event (default 32 MiB, ≈ 10,000 events of a
   * finished request): each event holds its whole object, so this, not the count, bounds the history's memory.
   * A watch from a revision no longer kept ends with Gone, and the caller re-lists.
   */
  historyBytes?: number;
  /**
   * Compact when the log since the last snapshot passes `compactRatio` × the snapshot's size plus
   * `compactFloorBytes` (defaults 1 and 4 MiB): the files stay within about twice the live data plus the
   * floor, and each compaction writes at most as many bytes as were logged since the last.
   */
  compactRatio?: number;
  compactFloorBytes?: number;
  /** Also compact on this period if anything was logged since the last snapshot (default 10 min; 0 = never). */
  compactIntervalMs?: number;
  /** Where errors of background compaction go (they are not fatal: the log still holds everything). */
  onBackgroundError?: (error: unknown) => void;
  /**
   * After a failed log write, how often the store tries to recover on its own (default 1 s); a write also
   * tries at once. Until one succeeds, writes fail with Unavailable, reads go on, health() says why.
   */
  recoveryRetryMs?: number;
  /**
   * Called once if the store stops for good: its log on disk is not what it acknowledged, so only a reopen
   * (a process restart) can tell what is true. Default: logs to stderr. The process should exit.
   */
  onFatal?: (error: StoreError) => void;
  /** The log's file operations; tests pass ones that fail like a full or broken disk. */
  files?: LogFiles;
}

export interface EmbeddedStoreStats {
  /** Latest durable revision. */
  revision: number;
  objects: number;
  watches: number;
  wal: WalWriterStats & { segmentStartRevision: number; bytesSinceSnapshot: number };
  snapshots: number;
  lastSnapshotRevision: number;
  lastSnapshotBytes: number;
  lastCompactionMs: number | undefined;
  /** JSON of the live objects, in UTF-16 code units (bytes for ASCII). */
  objectBytes: number;
  /** The watch history: events kept, and their objects' JSON (as objectBytes). */
  history: { events: number; bytes: number };
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

const DEFAULT_HISTORY_BYTES = 32 << 20;

/**
 * Opens the store in `dir`: takes the lock, loads the snapshot, replays the log (ignoring a torn last
 * line), and starts appending. Fails with StoreError Unavailable if another live process owns the directory.
 * The directory and its files are the service user's only (0700, 0600), whatever the umask: they hold the API
 * keys' hashes and every request.
 */
export async function openEmbeddedStore(opts: EmbeddedStoreOptions): Promise<EmbeddedStore> {
  await ensurePrivateTree(opts.dir);
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
  /** Keys with a write appended to the log but not yet committed, and the revision of that write. */
  private readonly inFlight = new Map<string, number>();
  private committedRev: number;
  private assignedRev: number;
  private commitWaiters: { rev: number; resolve: () => void; reject: (e: unknown) => void }[] = [];
  private wal!: WalWriter<Mutation>;
  private readonly hub: WatchHub;
  /** Whether writes go through; after a failed log write, until a recovery succeeds, they do not. */
  private condition: StoreHealth = { writable: true };
  private recovering: Promise<void> | undefined;
  private retryTimer: NodeJS.Timeout | undefined;
  private closing: Promise<void> | undefined;
  private compacting: Promise<void> | undefined;
  /** Bytes of log the last snapshot does not cover, and that snapshot's size: they decide when to compact. */
  private logBytes = 0;
  private snapshotBytes: number;
  /** After a failed compaction (a full disk), the next waits until the log has grown by another floor. */
  private compactAgainAtBytes = 0;
  private snapshots = 0;
  private lastSnapshotRev: number;
  private lastCompactionMs: number | undefined;
  private timer: NodeJS.Timeout | undefined;

  private constructor(
    readonly dir: string,
    private readonly lock: StoreLock,
    private readonly opts: EmbeddedStoreOptions,
    snapshot: { revision: number; bytes: number },
    private readonly objects: Map<Kind, Map<string, Entry>>,
  ) {
    this.committedRev = snapshot.revision;
    this.assignedRev = snapshot.revision;
    this.lastSnapshotRev = snapshot.revision;
    this.snapshotBytes = snapshot.bytes;
    this.hub = new WatchHub(opts.historyLimit ?? 50_000, opts.historyBytes ?? DEFAULT_HISTORY_BYTES, snapshot.revision);
  }

  static async open(dir: string, lock: StoreLock, opts: EmbeddedStoreOptions): Promise<Embedded> {
    await removeSnapshotLeftovers(dir);
    await fs.rm(join(dir, PROBE_FILE), { force: true });
    // Each object is kept serialized as it is read; the parsed ones are garbage at once.
    const objects = new Map<Kind, Map<string, Entry>>(KINDS.map((k) => [k, new Map()]));
    const snapshot = await readSnapshot(dir, (obj) => {
      objects.get(kindOf(obj))!.set(keyOf(obj.metadata.namespace, obj.metadata.name), toEntry(obj));
    });
    const store = new Embedded(dir, lock, opts, snapshot ?? { revision: 0, bytes: 0 }, objects);
    const tail = await store.replayLog();
    store.wal = await WalWriter.open<Mutation>(dir, tail, {
      fsync: opts.fsync ?? true,
      ...(opts.files !== undefined && { files: opts.files }),
      onCommit: (batch, bytes) => store.commit(batch, bytes),
      onFail: (e, lost) => store.fail(e, lost),
    });
    const interval = opts.compactIntervalMs ?? 600_000;
    if (interval > 0) {
      store.timer = setInterval(() => {
        if (store.logBytes > 0) store.compactInBackground();
      }, interval);
      store.timer.unref();
    }
    if (store.compactionDue()) store.compactInBackground();
    return store;
  }

  /**
   * Applies every logged record after the snapshot, each also seeding the watch history (which keeps the last
   * of them, within its bounds); returns where appending resumes.
   */
  private async replayLog(): Promise<SegmentTail> {
    const segments = await listSegments(this.dir);
    let tail: SegmentTail = { startRev: this.committedRev + 1, bytes: 0, lastRev: undefined };
    for (const [i, seg] of segments.entries()) {
      // Streamed: one record at a time is held, applied as it is read. A corrupt segment throws midway, and
      // the open fails with everything applied so far discarded.
      const scan = await scanSegment(seg.path, (rec) => {
        if (rec.rev <= this.committedRev) return;
        const { kind, namespace, name } = recordKey(rec);
        const map = this.objects.get(kind);
        if (map === undefined) throw new Error(`${seg.path}: record of unknown kind ${kind}`);
        const key = keyOf(namespace, name);
        const before = map.get(key);
        const prev = rec.op === 'put' || before === undefined ? undefined : (JSON.parse(before.json) as AnyResource);
        let applied: ReturnType<typeof applyRecord>;
        try {
          applied = applyRecord(rec, prev);
        } catch (e) {
          throw new Error(`write-ahead log ${seg.path}: ${(e as Error).message}`);
        }
        const entry = toEntry(applied.object);
        if (applied.type === 'DELETED') map.delete(key);
        else map.set(key, entry);
        this.committedRev = rec.rev;
        this.hub.seed(changeEvent(rec.rev, applied.type, kind, entry, before?.labels));
      });
      if (scan.tornBytes > 0) {
        if (i !== segments.length - 1) {
          throw new Error(`write-ahead log ${seg.path} has a bad tail but is not the last segment`);
        }
        // The crashed process's last write: never acknowledged, so it is dropped.
        await truncateSegment(seg.path, scan.goodBytes);
      }
      this.logBytes += scan.goodBytes;
      tail = { startRev: seg.startRev, bytes: scan.goodBytes, lastRev: scan.lastRev };
    }
    this.assignedRev = this.committedRev;
    return tail;
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
    await this.writable();
    for (let w = this.busy(kind, key); w; w = this.busy(kind, key)) await w;
    if (this.objects.get(kind)!.has(key)) {
      throw new StoreError('AlreadyExists', `${kind} ${namespace}/${name} already exists`, {
        details: { kind, namespace, name },
      });
    }
    const next = prepareCreate(kind, { ...obj, metadata: { ...obj.metadata, namespace } }, randomUUID(), new Date());
    return (await this.write(kind, key, 'ADDED', next, (rev, json) => encodePut(rev, 'ADDED', json))) as T;
  }

  async update<T extends AnyResource>(obj: T): Promise<T> {
    return this.modify(obj, 'update') as Promise<T>;
  }

  async updateStatus<T extends AnyResource>(obj: T): Promise<T> {
    return this.modify(obj, 'status') as Promise<T>;
  }

  private async modify(obj: AnyResource, verb: 'update' | 'status'): Promise<AnyResource> {
    const kind = kindOf(obj);
    const { namespace, name } = identityOf(obj);
    const key = keyOf(namespace, name);
    await this.writable();
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
    if (verb === 'status') {
      const change = prepareStatusUpdate(kind, current, obj);
      if (change.type === 'UNCHANGED') return current;
      const status = change.object.status;
      return this.write(kind, key, change.type, change.object, (rev) =>
        encodeStatus(rev, kind, namespace, name, current.status, status),
      );
    }
    const change = prepareUpdate(kind, current, obj);
    if (change.type === 'UNCHANGED') return current;
    return this.write(kind, key, change.type, change.object, (rev, json) => encodePut(rev, change.type, json));
  }

  async delete(kind: Kind, name: string, opts: DeleteOptions = {}): Promise<void> {
    assertKind(kind);
    const namespace = opts.namespace ?? DEFAULT_NAMESPACE;
    const key = keyOf(namespace, name);
    await this.writable();
    for (let w = this.busy(kind, key); w; w = this.busy(kind, key)) await w;
    const entry = this.objects.get(kind)!.get(key);
    if (entry === undefined) throw notFound(kind, namespace, name);
    const current = JSON.parse(entry.json) as AnyResource;
    const expected = opts.preconditions?.resourceVersion;
    if (expected !== undefined && expected !== current.metadata.resourceVersion) throw conflict(kind, namespace, name);
    const change = prepareDelete(current, new Date());
    if (change.type === 'DELETED') {
      // The object's last state is the stored one: the record names it only.
      await this.write(kind, key, 'DELETED', change.object, (rev) => encodeDelete(rev, kind, namespace, name));
    } else if (change.type === 'MODIFIED') {
      await this.write(kind, key, 'MODIFIED', change.object, (rev, json) => encodePut(rev, 'MODIFIED', json));
    }
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

  /**
   * Assigns the next revision and appends the record `encode` makes of the object (given the revision and
   * the object's JSON); resolves with the stored object once it is durable.
   */
  private write(
    kind: Kind,
    key: string,
    type: WatchEventType,
    object: AnyResource,
    encode: (rev: number, objectJson: string) => string,
  ): Promise<AnyResource> {
    this.assertWritable();
    const rev = ++this.assignedRev;
    object.metadata.resourceVersion = String(rev);
    const json = JSON.stringify(object);
    const entry = toEntry(object, json);
    const prevLabels = this.objects.get(kind)!.get(key)?.labels;
    const line = encodeLine(encode(rev, json));
    this.inFlight.set(`${kind}/${key}`, rev);
    return new Promise<AnyResource>((resolve, reject) => {
      this.wal.append({ line, rev, type, kind, key, entry, prevLabels, resolve, reject });
    });
  }

  /** A batch is on disk: apply it, tell the watches, then acknowledge the writers. */
  private commit(batch: Mutation[], bytes: number): void {
    const events: ChangeEvent[] = [];
    for (const m of batch) {
      const map = this.objects.get(m.kind)!;
      if (m.type === 'DELETED') map.delete(m.key);
      else map.set(m.key, m.entry);
      const flightKey = `${m.kind}/${m.key}`;
      if (this.inFlight.get(flightKey) === m.rev) this.inFlight.delete(flightKey);
      this.committedRev = m.rev;
      events.push(changeEvent(m.rev, m.type, m.kind, m.entry, m.prevLabels));
    }
    this.logBytes += bytes;
    this.hub.publish(events);
    for (const m of batch) m.resolve(JSON.parse(m.entry.json) as AnyResource);
    if (this.commitWaiters.length > 0) {
      const ready = this.commitWaiters.filter((w) => w.rev <= this.committedRev);
      this.commitWaiters = this.commitWaiters.filter((w) => w.rev > this.committedRev);
      for (const w of ready) w.resolve();
    }
    if (this.compactionDue()) this.compactInBackground();
  }

  private committed(rev: number): Promise<void> {
    if (rev <= this.committedRev) return Promise.resolve();
    return new Promise((resolve, reject) => this.commitWaiters.push({ rev, resolve, reject }));
  }

  // ---- failure and recovery ----

  /**
   * A write or sync of the log failed, so what it left on disk is unknown: every write not yet committed
   * fails with Unavailable (none of them was acknowledged, and recovery cuts them off the log), and writes
   * are refused until recovery succeeds. Reads and watches go on: memory holds exactly the committed writes,
   * and those are on disk.
   */
  private fail(cause: unknown, lost: Mutation[]): void {
    if (!this.closing) {
      const since = this.condition.writable ? new Date().toISOString() : this.condition.since;
      this.condition = { writable: false, reason: reasonOf(cause), since, recovering: true };
    }
    const error = this.unavailable(cause);
    for (const m of lost) m.reject(error);
    for (const w of this.commitWaiters.splice(0)) w.reject(error);
    this.inFlight.clear();
    if (this.closing) return;
    // At once, so that the unknown tail is cut before anything else happens; then on a timer until it works.
    void this.recover();
    const every = this.opts.recoveryRetryMs ?? 1_000;
    if (this.retryTimer === undefined && every > 0) {
      this.retryTimer = setInterval(() => void this.recover(), every);
      this.retryTimer.unref();
    }
  }

  /** One recovery attempt (see WalWriter.recover); concurrent callers share it. */
  private recover(): Promise<void> {
    if (this.condition.writable || !this.condition.recovering || this.closing) return Promise.resolve();
    this.recovering ??= this.attemptRecovery();
    return this.recovering;
  }

  private async attemptRecovery(): Promise<void> {
    let result: RecoveryResult;
    try {
      result = await this.wal.recover();
    } finally {
      // Cleared with the outcome (not a turn later), so a failure right after starts an attempt of its own.
      this.recovering = undefined;
    }
    if (this.condition.writable || !this.condition.recovering) return; // closed meanwhile
    if (result.ok) {
      // The failed writes' revisions are free again: neither memory nor the log holds them any more.
      this.assignedRev = this.committedRev;
      this.condition = { writable: true };
      this.stopRetrying();
    } else if (result.permanent) {
      this.stop(result.error);
    } else {
      this.condition = { ...this.condition, reason: reasonOf(result.error) };
    }
  }

  /** The log on disk is not what was acknowledged: stop serving anything, and say so. */
  private stop(cause: unknown): void {
    const since = this.condition.writable ? new Date().toISOString() : this.condition.since;
    this.condition = { writable: false, reason: reasonOf(cause), since, recovering: false };
    this.stopRetrying();
    const error = this.unavailable(cause);
    this.hub.endAll(error);
    (this.opts.onFatal ?? defaultFatal)(error);
  }

  private stopRetrying(): void {
    clearInterval(this.retryTimer);
    this.retryTimer = undefined;
  }

  health(): StoreHealth {
    return { ...this.condition };
  }

  /** Before a write: if the log has failed, one more recovery attempt first, so no write waits for the timer. */
  private async writable(): Promise<void> {
    this.assertReadable();
    if (!this.condition.writable) await this.recover();
    this.assertWritable();
  }

  private unavailable(cause?: unknown): StoreError {
    const c = this.condition;
    const withCause = cause === undefined ? {} : { cause };
    if (c.writable || this.closing) return new StoreError('Unavailable', `store at ${this.dir} is closed`, withCause);
    const message = c.recovering
      ? `store at ${this.dir} cannot write (${c.reason}); it retries by itself`
      : `store at ${this.dir} has stopped: ${c.reason}; the process must restart`;
    return new StoreError('Unavailable', message, { details: { reason: c.reason, since: c.since }, ...withCause });
  }

  // ---- compaction ----

  compact(): Promise<void> {
    this.assertWritable();
    this.compacting ??= this.runCompaction().finally(() => {
      this.compacting = undefined;
    });
    return this.compacting;
  }

  private compactionDue(): boolean {
    const floor = this.opts.compactFloorBytes ?? 4 << 20;
    const due = this.logBytes > (this.opts.compactRatio ?? 1) * this.snapshotBytes + floor;
    return due && this.logBytes > this.compactAgainAtBytes;
  }

  private compactInBackground(): void {
    if (this.compacting || this.closing || !this.condition.writable) return;
    this.compact().catch((e) => (this.opts.onBackgroundError ?? defaultBackgroundError)(e));
  }

  /**
   * Rotates the log at a batch boundary, capturing the committed state at that revision; writes it as the
   * snapshot while new writes go to the new segment; then deletes the segments the snapshot covers.
   */
  private async runCompaction(): Promise<void> {
    const started = performance.now();
    let revision = 0;
    let objects: string[] = [];
    let coveredBytes = 0;
    try {
      const boundary = await this.wal.rotate(() => {
        revision = this.committedRev;
        objects = [];
        for (const map of this.objects.values()) for (const e of map.values()) objects.push(e.json);
        coveredBytes = this.logBytes;
        return revision + 1;
      });
      const bytes = await writeSnapshot(this.dir, revision, objects);
      this.snapshotBytes = bytes;
      this.snapshots++;
      this.lastSnapshotRev = revision;
      for (const seg of await listSegments(this.dir)) {
        if (seg.startRev < boundary) await fs.rm(seg.path, { force: true });
      }
      await fsyncDir(this.dir);
      this.logBytes -= coveredBytes;
      this.compactAgainAtBytes = 0;
      this.lastCompactionMs = performance.now() - started;
    } catch (e) {
      this.compactAgainAtBytes = this.logBytes + (this.opts.compactFloorBytes ?? 4 << 20);
      throw e;
    }
  }

  stats(): EmbeddedStoreStats {
    let objects = 0;
    let objectBytes = 0;
    for (const map of this.objects.values()) {
      objects += map.size;
      for (const e of map.values()) objectBytes += e.json.length;
    }
    return {
      revision: this.committedRev,
      objects,
      watches: this.hub.watchCount,
      wal: {
        ...this.wal.stats,
        segmentStartRevision: this.wal.currentSegmentStartRev,
        bytesSinceSnapshot: this.logBytes,
      },
      snapshots: this.snapshots,
      lastSnapshotRevision: this.lastSnapshotRev,
      lastSnapshotBytes: this.snapshotBytes,
      lastCompactionMs: this.lastCompactionMs,
      objectBytes,
      history: this.hub.historyStats,
    };
  }

  // ---- lifecycle ----

  close(): Promise<void> {
    this.closing ??= (async () => {
      if (this.condition.writable || this.condition.recovering) {
        const since = new Date().toISOString();
        this.condition = { writable: false, reason: 'the store is closed', since, recovering: false };
      }
      if (this.timer) clearInterval(this.timer);
      this.stopRetrying();
      await this.recovering;
      await this.compacting?.catch(() => undefined);
      await this.wal.close();
      this.hub.endAll(new StoreError('Unavailable', `store at ${this.dir} is closed`));
      await this.lock.release();
    })();
    return this.closing;
  }

  private assertReadable(): void {
    if (this.closing) throw new StoreError('Unavailable', `store at ${this.dir} is closed`);
    if (!this.condition.writable && !this.condition.recovering) throw this.unavailable();
  }

  private assertWritable(): void {
    this.assertReadable();
    if (!this.condition.writable) throw this.unavailable();
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
const defaultFatal = (e: StoreError) => console.error('embedded store: stopped:', e);

/** An error as a health reason: node:fs messages already lead with the code ("ENOSPC: no space left…"). */
const reasonOf = (e: unknown): string => (e instanceof Error ? e.message : String(e));
