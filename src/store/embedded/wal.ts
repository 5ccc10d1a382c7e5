import { promises as fs } from 'node:fs';
import { join } from 'node:path';
import { crc32 } from 'node:zlib';
import { fsyncDir } from '../../lib/fs.ts';
import { openPrivateFile } from '../../lib/privateFs.ts';
import { decodeRecord, type WalRecord } from './records.ts';

/**
 * The write-ahead log: one line per mutation, `<crc32 of the record, 8 hex digits> <record>` (records.ts
 * says what a record holds), in segment files named by the first revision they may hold (`wal-<rev>.log`),
 * so a torn or rotted line is told apart from a good one. A new segment starts at each compaction; segments
 * wholly covered by the snapshot are then deleted. Lines of version 1, `{"crc":"…","rec":{…}}`, are read too.
 */

/** Frames a record's JSON text as a log line (with its newline). */
export function encodeLine(recordJson: string): string {
  return `${checksum(recordJson)} ${recordJson}\n`;
}

const checksum = (text: string): string => crc32(text).toString(16).padStart(8, '0');
const V1_PREFIX = '{"crc":"';
const V1_PREFIX_LEN = '{"crc":"00000000","rec":'.length;

/** Decodes one line (without its newline); undefined when it is torn, garbled or fails its checksum. */
export function decodeLine(line: string): WalRecord | undefined {
  let crc: string;
  let json: string;
  if (line.startsWith(V1_PREFIX)) {
    if (!line.endsWith('}')) return undefined;
    crc = line.slice(8, 16);
    json = line.slice(V1_PREFIX_LEN, -1);
  } else {
    if (line.charCodeAt(8) !== 0x20) return undefined;
    crc = line.slice(0, 8);
    json = line.slice(9);
  }
  return checksum(json) === crc ? decodeRecord(json) : undefined;
}

/**
 * The file operations of the log: node:fs, except in tests, which pass ones that fail as a full or broken
 * disk does (testing/faultyFiles.ts).
 */
export interface LogFiles {
  /** `a`: for appending, created if missing; `w`: created or emptied. */
  open(path: string, flags: 'a' | 'w'): Promise<LogFile>;
  syncDir(dir: string): Promise<void>;
  remove(path: string): Promise<void>;
}

export interface LogFile {
  write(buffer: Buffer, offset: number, length: number): Promise<{ bytesWritten: number }>;
  datasync(): Promise<void>;
  truncate(length: number): Promise<void>;
  close(): Promise<void>;
}

export const nodeLogFiles: LogFiles = {
  open: (path, flags) => openPrivateFile(path, flags), // 0600: the log holds the API keys' hashes
  syncDir: fsyncDir,
  remove: (path) => fs.rm(path, { force: true }),
};

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

/** What scanning a segment found, its records having gone to the caller one by one. */
export interface SegmentScan {
  /** Good records. */
  count: number;
  /** The revision of the last good record. */
  lastRev: number | undefined;
  goodBytes: number;
  tornBytes: number;
}

/**
 * Reads a segment. A bad line at the end (the last write of a crashed process, never acknowledged) is a torn
 * tail and is reported, not an error; a bad line followed by good ones is corruption of acknowledged data,
 * and opening fails rather than silently dropping it (etcd's WAL draws the same line).
 */
export async function readSegment(path: string): Promise<SegmentContents> {
  const records: WalRecord[] = [];
  const { goodBytes, tornBytes } = await scanSegment(path, (rec) => records.push(rec));
  return { records, goodBytes, tornBytes };
}

/** Bytes read at a time: a segment is streamed, never held whole (it may be as large as the live data). */
const SCAN_CHUNK = 1 << 20;

/**
 * readSegment without keeping the records: each good one goes to `onRecord` in order as it is read, so
 * replay holds one record at a time. When the segment turns out corrupt (a bad line, then a good one) the
 * records before were handed over already and the call throws; the caller must then discard what it built.
 */
export async function scanSegment(path: string, onRecord: (rec: WalRecord) => void): Promise<SegmentScan> {
  const fh = await fs.open(path, 'r');
  const chunk = Buffer.allocUnsafe(SCAN_CHUNK);
  /** Bytes of the segment before `carry`, which holds the start of a line not yet ended. */
  let base = 0;
  let carry: Buffer = Buffer.alloc(0);
  let count = 0;
  let lastRev: number | undefined;
  let goodBytes = 0;
  let badAt: number | undefined;
  try {
    for (;;) {
      const { bytesRead } = await fh.read(chunk, 0, SCAN_CHUNK, null);
      if (bytesRead === 0) break;
      // Lines are decoded from `buf`, which starts at segment byte `base`.
      const buf = carry.length === 0 ? chunk.subarray(0, bytesRead) : Buffer.concat([carry, chunk.subarray(0, bytesRead)]);
      let offset = 0;
      for (let nl = buf.indexOf(0x0a, offset); nl >= 0; nl = buf.indexOf(0x0a, offset)) {
        const rec = decodeLine(buf.toString('utf8', offset, nl));
        if (rec === undefined) {
          badAt ??= base + offset;
        } else {
          if (badAt !== undefined) {
            throw new Error(
              `write-ahead log ${path} is corrupt: bad record at byte ${badAt} followed by good ones (revision ${rec.rev})`,
            );
          }
          onRecord(rec);
          count++;
          lastRev = rec.rev;
          goodBytes = base + nl + 1;
        }
        offset = nl + 1;
      }
      // Copied: `chunk` is reused by the next read.
      carry = Buffer.from(buf.subarray(offset));
      base += offset;
    }
  } finally {
    await fh.close();
  }
  // A last line without its newline is torn (it is never acknowledged before its newline is on disk).
  return { count, lastRev, goodBytes, tornBytes: base + carry.length - goodBytes };
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
  rev: number;
}

/** Where appending resumes: the last segment, its committed bytes, and the revision of its last record. */
export interface SegmentTail {
  startRev: number;
  bytes: number;
  lastRev: number | undefined;
}

export interface WalWriterOptions<T extends WalItem> {
  fsync: boolean;
  /** Default: node:fs. */
  files?: LogFiles;
  /** Called once per batch, in order, after the batch (of `bytes`) is on disk (fdatasync returned). */
  onCommit(items: T[], bytes: number): void;
  /**
   * Called on a write or sync error with every item not committed (none of them will be): the log takes no
   * more appends until recover() succeeds.
   */
  onFail(error: unknown, items: T[]): void;
}

/** permanent: the log on disk is not what was acknowledged, so recovering in this process is impossible. */
export type RecoveryResult = { ok: true } | { ok: false; error: unknown; permanent: boolean };

export interface WalWriterStats {
  batches: number;
  records: number;
  bytes: number;
  maxBatch: number;
  syncs: number;
}

/** Written and removed by recover() to see whether the file system takes writes again. */
export const PROBE_FILE = 'wal-probe.tmp';
/** About the largest batch group commit makes (256 records of ~1 KiB). */
const PROBE_BYTES = 256 << 10;

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
  private failed = false;
  private failure: unknown;
  /** Since the failure, the segment has been cut back to its committed bytes and checked. */
  private tailCut = false;
  private running = false;
  private scheduled = false;
  private idleWaiters: (() => void)[] = [];
  /** Bytes of the current segment that hold committed records, and the revision of the last of them. */
  private segmentBytes: number;
  private lastRev: number | undefined;
  private segmentStartRev: number;
  readonly stats: WalWriterStats = { batches: 0, records: 0, bytes: 0, maxBatch: 0, syncs: 0 };

  private constructor(
    private readonly dir: string,
    private readonly files: LogFiles,
    private fh: LogFile,
    tail: SegmentTail,
    private readonly opts: WalWriterOptions<T>,
  ) {
    this.segmentStartRev = tail.startRev;
    this.segmentBytes = tail.bytes;
    this.lastRev = tail.lastRev;
  }

  /** Opens (creating if needed) the segment `tail` describes, for appending after its committed bytes. */
  static async open<T extends WalItem>(dir: string, tail: SegmentTail, opts: WalWriterOptions<T>): Promise<WalWriter<T>> {
    const files = opts.files ?? nodeLogFiles;
    const fh = await files.open(join(dir, segmentFileName(tail.startRev)), 'a');
    try {
      await files.syncDir(dir);
    } catch (e) {
      await fh.close().catch(() => undefined);
      throw e;
    }
    return new WalWriter(dir, files, fh, tail, opts);
  }

  get currentSegmentStartRev(): number {
    return this.segmentStartRev;
  }

  append(item: T): void {
    if (this.failed) throw new Error('write-ahead log has failed', { cause: this.failure });
    this.pending.push(item);
    this.appended++;
    this.schedule();
  }

  /**
   * Starts a new segment between two batches. `atBoundary` runs synchronously once every item appended
   * before this call is committed, and before any item appended after it is written; it returns the revision
   * the new segment starts at. Resolves with that revision once the new segment is durable (segments before
   * it hold only revisions below it). A file system error here fails the log as a failed append does.
   */
  rotate(atBoundary: () => number): Promise<number> {
    if (this.failed) return Promise.reject(new Error('write-ahead log has failed', { cause: this.failure }));
    return new Promise<number>((resolve, reject) => {
      const run = async () => {
        const startRev = atBoundary();
        if (startRev === this.segmentStartRev) return resolve(startRev);
        let next: LogFile | undefined;
        const path = join(this.dir, segmentFileName(startRev));
        try {
          // The old segment is finished: make it whole even when per-batch syncs are off.
          await this.fh.datasync();
          next = await this.files.open(path, 'a');
          await this.files.syncDir(this.dir);
        } catch (e) {
          if (next !== undefined) {
            await next.close().catch(() => undefined);
            await this.files.remove(path).catch(() => undefined);
          }
          this.fail(e, []);
          return reject(e);
        }
        const old = this.fh;
        this.fh = next;
        this.segmentStartRev = startRev;
        this.segmentBytes = 0;
        this.lastRev = undefined;
        await old.close().catch(() => undefined);
        resolve(startRev);
      };
      this.tasks.push({ after: this.appended, run, fail: reject });
      this.schedule();
    });
  }

  /**
   * After a failure: cuts the current segment back to its committed bytes (what a failed write or sync left
   * after them is unknown: after a failed fdatasync the kernel may have dropped the pages, and a retried sync
   * can report success for data that never reached the disk), syncs, reads the segment back and checks it
   * holds exactly the committed records; then writes and syncs a probe file to see whether the file system
   * takes writes again. On success the log takes appends again, after its last committed record.
   */
  async recover(): Promise<RecoveryResult> {
    if (!this.failed) return { ok: true };
    await this.drain();
    try {
      if (!this.tailCut) {
        const path = join(this.dir, segmentFileName(this.segmentStartRev));
        await this.fh.close().catch(() => undefined);
        this.fh = await this.files.open(path, 'a');
        await this.fh.truncate(this.segmentBytes);
        await this.fh.datasync();
        const diverged = await this.checkSegment(path);
        if (diverged !== undefined) return { ok: false, error: new Error(diverged), permanent: true };
        this.tailCut = true;
      }
      await this.probe();
    } catch (e) {
      return { ok: false, error: e, permanent: false };
    }
    this.failed = false;
    this.failure = undefined;
    this.tailCut = false;
    return { ok: true };
  }

  /** Why the segment on disk is not the committed one, or undefined when it is. */
  private async checkSegment(path: string): Promise<string | undefined> {
    let contents: SegmentContents;
    try {
      contents = await readSegment(path);
    } catch (e) {
      if (typeof (e as { code?: unknown }).code === 'string') throw e; // an I/O error: try again later
      return (e as Error).message;
    }
    const last = contents.records.at(-1)?.rev;
    if (contents.goodBytes !== this.segmentBytes || contents.tornBytes > 0 || last !== this.lastRev) {
      return (
        `write-ahead log ${path} is not what was committed: it holds ${contents.goodBytes} good bytes up to revision ` +
        `${last ?? 'none'} (and ${contents.tornBytes} bad ones) where ${this.segmentBytes} bytes up to revision ` +
        `${this.lastRev ?? 'none'} were committed`
      );
    }
    return undefined;
  }

  private async probe(): Promise<void> {
    const path = join(this.dir, PROBE_FILE);
    const fh = await this.files.open(path, 'w');
    try {
      await writeAll(fh, Buffer.alloc(PROBE_BYTES));
      await fh.datasync();
    } finally {
      await fh.close().catch(() => undefined);
      await this.files.remove(path).catch(() => undefined);
    }
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
    // After a failure the handle may be closed already; nothing is pending on it.
    if (this.failed) await this.fh.close().catch(() => undefined);
    else await this.fh.close();
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
    if (this.failed) {
      for (const task of this.tasks.splice(0)) task.fail(new Error('write-ahead log has failed', { cause: this.failure }));
    }
    if ((this.pending.length > 0 || this.tasks.length > 0) && !this.failed) {
      // Yield one turn first, so that writers woken by this commit can join the next batch.
      this.schedule();
    } else if (!this.scheduled) {
      for (const w of this.idleWaiters.splice(0)) w();
    }
  }

  private async writeBatch(count: number): Promise<void> {
    const batch = this.pending.slice(0, count);
    this.pending = this.pending.slice(count);
    const data = Buffer.from(batch.map((i) => i.line).join(''), 'utf8');
    try {
      await writeAll(this.fh, data);
      if (this.opts.fsync) {
        await this.fh.datasync();
        this.stats.syncs++;
      }
    } catch (e) {
      this.fail(e, batch);
      return;
    }
    this.written += batch.length;
    this.segmentBytes += data.length;
    this.lastRev = batch.at(-1)!.rev;
    this.stats.batches++;
    this.stats.records += batch.length;
    this.stats.bytes += data.length;
    this.stats.maxBatch = Math.max(this.stats.maxBatch, batch.length);
    this.opts.onCommit(batch, data.length);
  }

  /** Every item not committed is dropped and handed back; the items appended count restarts from the written. */
  private fail(error: unknown, batch: T[]): void {
    this.failed = true;
    this.failure = error;
    this.tailCut = false;
    const lost = [...batch, ...this.pending];
    this.pending = [];
    this.appended = this.written;
    this.opts.onFail(error, lost);
  }
}

async function writeAll(fh: LogFile, data: Buffer): Promise<void> {
  let written = 0;
  while (written < data.length) {
    const { bytesWritten } = await fh.write(data, written, data.length - written);
    written += bytesWritten;
  }
}
