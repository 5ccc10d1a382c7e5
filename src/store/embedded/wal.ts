import { promises as fs } from 'node:fs';
import type { FileHandle } from 'node:fs/promises';
import { join } from 'node:path';
import { crc32 } from 'node:zlib';
import type { AnyResource, Kind } from '../../api/v1alpha1/index.ts';
import type { WatchEventType } from '../types.ts';
import { fsyncDir } from '../../lib/fs.ts';

/**
 * The write-ahead log: JSON lines, one per mutation, in segment files named by the first revision they may
 * hold (`wal-<rev>.log`). Each line is `{"crc":"<crc32 of rec>","rec":{rev,type,kind,namespace,name,object}}`
 * so a torn or rotted line is told apart from a good one. A new segment starts at each compaction; segments
 * wholly covered by the snapshot are then deleted.
 */
export interface WalRecord {
  rev: number;
  type: WatchEventType;
  kind: Kind;
  namespace: string;
  name: string;
  /** The object after the change; for DELETED, its last state (as a watch's DELETED event carries it). */
  object: AnyResource;
}

const PREFIX_LEN = '{"crc":"00000000","rec":'.length;

/** Encodes one record as a log line (with its newline). `objectJson` is the object, already serialized. */
export function encodeRecord(
  rev: number,
  type: WatchEventType,
  kind: Kind,
  namespace: string,
  name: string,
  objectJson: string,
): string {
  const rec = `{"rev":${rev},"type":"${type}","kind":"${kind}","namespace":${JSON.stringify(namespace)},"name":${JSON.stringify(name)},"object":${objectJson}}`;
  return `{"crc":"${crc32(rec).toString(16).padStart(8, '0')}","rec":${rec}}\n`;
}

/** Decodes one line (without its newline); undefined when it is torn, garbled or fails its checksum. */
export function decodeLine(line: string): WalRecord | undefined {
  if (!line.startsWith('{"crc":"') || !line.endsWith('}')) return undefined;
  const rec = line.slice(PREFIX_LEN, -1);
  const crc = line.slice(8, 16);
  if (crc32(rec).toString(16).padStart(8, '0') !== crc) return undefined;
  try {
    const parsed = JSON.parse(rec) as WalRecord;
    return typeof parsed.rev === 'number' ? parsed : undefined;
  } catch {
    return undefined;
  }
}

export interface Segment {
  startRev: number;
  path: string;
}

export const segmentFileName = (startRev: number): string => `wal-${String(startRev).padStart(20, '0')}.log`;

export async function listSegments(dir: string): Promise<Segment[]> {
  const names = await fs.readdir(dir);
  const segments: Segment[] = [];
  for (const name of names) {
    const m = /^wal-(\d{20})\.log$/.exec(name);
    if (m?.[1]) segments.push({ startRev: Number(m[1]), path: join(dir, name) });
  }
  return segments.sort((a, b) => a.startRev - b.startRev);
}

export interface SegmentContents {
  records: WalRecord[];
  /** Bytes up to the end of the last good line. */
  goodBytes: number;
  /** Bytes after it: a torn tail, to be cut off before appending. */
  tornBytes: number;
}

/**
 * Reads a segment. A bad line at the end (the last write of a crashed process, never acknowledged) is a torn
 * tail and is reported, not an error; a bad line followed by good ones is corruption of acknowledged data,
 * and opening fails rather than silently dropping it (etcd's WAL draws the same line).
 */
export async function readSegment(path: string): Promise<SegmentContents> {
  const buf = await fs.readFile(path);
  const records: WalRecord[] = [];
  let offset = 0;
  let goodBytes = 0;
  let badAt: number | undefined;
  while (offset < buf.length) {
    const nl = buf.indexOf(0x0a, offset);
    const end = nl < 0 ? buf.length : nl;
    const rec = nl < 0 ? undefined : decodeLine(buf.toString('utf8', offset, end));
    if (rec === undefined) {
      badAt ??= offset;
    } else {
      if (badAt !== undefined) {
        throw new Error(
          `write-ahead log ${path} is corrupt: bad record at byte ${badAt} followed by good ones (revision ${rec.rev})`,
        );
      }
      records.push(rec);
      goodBytes = end + 1;
    }
    offset = end + 1;
  }
  return { records, goodBytes, tornBytes: buf.length - goodBytes };
}

/** Cuts a torn tail off a segment so that new records are appended after the last good one. */
export async function truncateSegment(path: string, length: number): Promise<void> {
  const fh = await fs.open(path, 'r+');
  try {
    await fh.truncate(length);
    await fh.sync();
  } finally {
    await fh.close();
  }
}

export interface WalItem {
  line: string;
}

export interface WalWriterOptions<T extends WalItem> {
  fsync: boolean;
  /** Called once per batch, in order, after the batch is on disk (fdatasync returned). */
  onCommit(items: T[]): void;
  /** Called once, on the first write or sync error: the log's tail is unknown from then on. */
  onFail(error: unknown, items: T[]): void;
}

export interface WalWriterStats {
  batches: number;
  records: number;
  bytes: number;
  maxBatch: number;
  syncs: number;
}

/**
 * Appends with group commit: everything appended while the previous batch was being written (or within the
 * same tick) goes out as one write and one fdatasync, then the whole batch is committed at once. One batch
 * is in flight at a time, so batches reach the disk, and are committed, in append order.
 */
export class WalWriter<T extends WalItem> {
  private pending: T[] = [];
  /** Work between batches (rotation), each to run once the items appended before it are written. */
  private tasks: { after: number; run: () => Promise<void>; fail: (e: unknown) => void }[] = [];
  private appended = 0;
  private written = 0;
  private failure: unknown;
  private running = false;
  private scheduled = false;
  private failed = false;
  private idleWaiters: (() => void)[] = [];
  readonly stats: WalWriterStats = { batches: 0, records: 0, bytes: 0, maxBatch: 0, syncs: 0 };

  constructor(
    private readonly dir: string,
    private fh: FileHandle,
    private segmentStartRev: number,
    private readonly opts: WalWriterOptions<T>,
  ) {}

  /** Opens (creating if needed) the segment that starts at `startRev`, for appending. */
  static async open<T extends WalItem>(dir: string, startRev: number, opts: WalWriterOptions<T>): Promise<WalWriter<T>> {
    const fh = await fs.open(join(dir, segmentFileName(startRev)), 'a');
    await fsyncDir(dir);
    return new WalWriter(dir, fh, startRev, opts);
  }

  get currentSegmentStartRev(): number {
    return this.segmentStartRev;
  }

  append(item: T): void {
    if (this.failed) throw new Error('write-ahead log has failed');
    this.pending.push(item);
    this.appended++;
    this.schedule();
  }

  /**
   * Starts a new segment between two batches. `atBoundary` runs synchronously once every item appended
   * before this call is committed, and before any item appended after it is written; it returns the revision the new segment starts at. Resolves
   * with that revision once the new segment is durable (segments before it hold only revisions below it).
   */
  rotate(atBoundary: () => number): Promise<number> {
    if (this.failed) return Promise.reject(new Error('write-ahead log has failed', { cause: this.failure }));
    return new Promise<number>((resolve, reject) => {
      const run = async () => {
        try {
          const startRev = atBoundary();
          if (startRev !== this.segmentStartRev) {
            // The old segment is finished: make it whole even when per-batch syncs are off.
            await this.fh.datasync();
            const next = await fs.open(join(this.dir, segmentFileName(startRev)), 'a');
            await fsyncDir(this.dir);
            const old = this.fh;
            this.fh = next;
            this.segmentStartRev = startRev;
            await old.close().catch(() => undefined);
          }
          resolve(startRev);
        } catch (e) {
          reject(e);
        }
      };
      this.tasks.push({ after: this.appended, run, fail: reject });
      this.schedule();
    });
  }

  /** Resolves when everything appended so far is committed (or has failed). */
  drain(): Promise<void> {
    if (!this.running && !this.scheduled && this.pending.length === 0 && this.tasks.length === 0) {
      return Promise.resolve();
    }
    return new Promise((resolve) => this.idleWaiters.push(resolve));
  }

  async close(): Promise<void> {
    await this.drain();
    await this.fh.close();
  }

  private schedule(): void {
    if (this.scheduled || this.running) return;
    this.scheduled = true;
    // setImmediate rather than a microtask: every write issued in this tick joins the batch.
    setImmediate(() => {
      this.scheduled = false;
      void this.runOnce();
    });
  }

  private async runOnce(): Promise<void> {
    this.running = true;
    try {
      for (;;) {
        const task = this.tasks[0];
        if (this.failed) break;
        if (task !== undefined && task.after <= this.written) {
          this.tasks.shift();
          await task.run();
          continue;
        }
        if (this.pending.length === 0) break;
        await this.writeBatch(task === undefined ? this.pending.length : task.after - this.written);
        if (task === undefined) break;
      }
    } finally {
      this.running = false;
    }
    if ((this.pending.length > 0 || this.tasks.length > 0) && !this.failed) {
      // Yield one turn first, so that writers woken by this commit can join the next batch.
      this.schedule();
    } else if (!this.scheduled) {
      for (const task of this.tasks.splice(0)) task.fail(new Error('write-ahead log has failed', { cause: this.failure }));
      for (const w of this.idleWaiters.splice(0)) w();
    }
  }

  private async writeBatch(count: number): Promise<void> {
    const batch = this.pending.slice(0, count);
    this.pending = this.pending.slice(count);
    const data = Buffer.from(batch.map((i) => i.line).join(''), 'utf8');
    try {
      let written = 0;
      while (written < data.length) {
        const { bytesWritten } = await this.fh.write(data, written, data.length - written);
        written += bytesWritten;
      }
      if (this.opts.fsync) {
        await this.fh.datasync();
        this.stats.syncs++;
      }
    } catch (e) {
      this.failed = true;
      this.failure = e;
      const lost = [...batch, ...this.pending];
      this.pending = [];
      this.opts.onFail(e, lost);
      return;
    }
    this.written += batch.length;
    this.stats.batches++;
    this.stats.records += batch.length;
    this.stats.bytes += data.length;
    this.stats.maxBatch = Math.max(this.stats.maxBatch, batch.length);
    this.opts.onCommit(batch);
  }
}
