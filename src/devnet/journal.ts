import { randomUUID } from 'node:crypto';
import { promises as fs } from 'node:fs';
import { join } from 'node:path';
import { fsyncDir } from '../lib/fs.ts';
import { AgentWalletError } from '../lib/errors.ts';
import { err, ok, type Result } from '../lib/result.ts';
import { PRIVATE_DIR_MODE, PRIVATE_FILE_MODE } from '../lib/privateFs.ts';

/**
 * One chain's write-ahead journal: every state-changing JSON-RPC call that reaches the chain (rpcProxy.ts) is
 * appended, and on disk (fdatasync), before it is forwarded to anvil; what anvil answered follows it. A start
 * replays the calls its snapshot does not hold (replay.ts), so a crash loses nothing anyone was answered.
 *
 * On disk: `<dataDir>/devnet/<chain>.journal/<first seq, 20 digits>.ndjson`, one JSON record per line:
 * - `{"journal":"<id>"}`: each segment's first line; the id ties snapshots (their marks) to this journal;
 * - `{"seq":7,"t":<ms>,"method":"…","params":…}`: a call, numbered in the order it was appended;
 * - `{"seq":7,"ok":true,"result":…}` or `{"seq":7,"ok":false,"error":{"code":…,"message":"…"}}`: its outcome,
 *   written before the answer is relayed (in the page cache, so a process crash keeps it; synced with the
 *   next call). A send answered with its hash only gets a second one with its receipt once it is mined.
 * A segment is started after each snapshot, and segments whose calls every kept snapshot holds are deleted.
 */

export interface JournalCall {
  seq: number;
  /** Wall-clock time it was appended (ms): for post-mortems. */
  t: number;
  method: string;
  params: unknown;
}

/** What anvil answered, reduced to what a replay compares (see `outcomeOf`). */
export type JournalOutcome = { ok: true; result?: unknown } | { ok: false; error: { code: number; message: string } };

/** A JSON-RPC answer, as far as outcomeOf reads it. */
export interface JournalReply {
  result?: unknown;
  error?: { code?: unknown; message?: unknown };
}

const MAX_KEPT_RESULT = 256;

/**
 * What the journal keeps of an answer: the error; small results as they are (snapshot ids, booleans, hashes);
 * of a receipt, what a replay compares and orders by; nothing of anything bigger.
 */
export function outcomeOf(reply: JournalReply): JournalOutcome {
  if (reply.error) {
    const code = typeof reply.error.code === 'number' ? reply.error.code : -32603;
    return { ok: false, error: { code, message: String(reply.error.message ?? '') } };
  }
  const r = reply.result;
  if (r === null || typeof r === 'boolean' || typeof r === 'number') return { ok: true, result: r };
  if (typeof r === 'string') return r.length <= MAX_KEPT_RESULT ? { ok: true, result: r } : { ok: true };
  if (typeof r === 'object' && 'transactionHash' in r) {
    const { transactionHash, status, gasUsed, blockNumber, transactionIndex } = r as Record<string, unknown>;
    return { ok: true, result: { transactionHash, status, gasUsed, blockNumber, transactionIndex } };
  }
  return { ok: true };
}

/** What the journal keeps of a receipt (eth_sendRawTransactionSync's answer). */
export interface ReceiptDigest {
  transactionHash: string;
  status: string;
  gasUsed: string;
  blockNumber: string;
  transactionIndex?: string;
}

export function isReceiptDigest(result: unknown): result is ReceiptDigest {
  return typeof result === 'object' && result !== null && typeof (result as ReceiptDigest).transactionHash === 'string' && typeof (result as ReceiptDigest).blockNumber === 'string';
}

export interface JournalEntry extends JournalCall {
  /**
   * Absent when the process died before anvil answered (or before the answer was recorded), or when the call
   * shared its id with another of its batch. A call anvil answered nothing for (refused with its whole request,
   * or a notification, which anvil does not run) has an error outcome: it did not run.
   */
  outcome?: JournalOutcome;
  /** The order anvil's answers arrived in (the outcomes' order in the journal), when there is an outcome. */
  answered?: number;
}

export interface ChainJournal {
  readonly id: string;
  /** The journal's directory. */
  readonly dir: string;
  /** The seq the next call gets. */
  readonly nextSeq: number;
  /** The first seq the journal can still hold: calls below it were dropped. */
  readonly firstSeq: number;
  /** Appends calls in order: their seqs at once, and a promise that they are on disk. */
  append(calls: readonly { method: string; params: unknown }[]): { seqs: number[]; durable: Promise<void> };
  /** Appends call `seq`'s outcome; resolves once it is written (not synced: see above). */
  recordOutcome(seq: number, outcome: JournalOutcome): Promise<void>;
  /**
   * Starts a new segment at `nextSeq` (if the current one holds a call), then deletes the segments whose calls
   * are all below `keepFrom`. Called once a snapshot is on disk.
   */
  rotate(keepFrom: number): Promise<void>;
  /** Waits for everything appended, then closes the file. */
  close(): Promise<void>;
}

export type JournalErrorCode = 'JournalCorrupt' | 'JournalFailed';

export class JournalError extends AgentWalletError<JournalErrorCode> {
  override readonly name = 'JournalError';
}

export const journalDir = (devnetDir: string, chain: string): string => join(devnetDir, `${chain}.journal`);
const segmentName = (startSeq: number): string => `${String(startSeq).padStart(20, '0')}.ndjson`;

interface Segment {
  startSeq: number;
  path: string;
}

/**
 * Opens a chain's journal, creating it if there is none, and reads back every call it holds (with their
 * outcomes), in order. A torn last line (a write the crash cut short: never synced, so never forwarded) is cut
 * off; a bad line followed by good ones is corruption, and an error.
 */
export async function openJournal(dir: string): Promise<Result<{ journal: ChainJournal; entries: JournalEntry[] }, JournalError>> {
  await fs.mkdir(dir, { recursive: true, mode: PRIVATE_DIR_MODE });
  const segments = await listSegments(dir);
  let id: string | undefined;
  const entries = new Map<number, JournalEntry>();
  let lastSeq = -1;
  let answers = 0;
  for (const [i, segment] of segments.entries()) {
    const last = i === segments.length - 1;
    const read = await readSegment(segment.path, last);
    if (!read.ok) return read;
    const { header, records, goodBytes, torn } = read.value;
    if (header === undefined) {
      // Created by a rotation the crash cut short, before its header was synced: it holds nothing.
      if (!last) return err(new JournalError('JournalCorrupt', `devnet journal segment ${segment.path} has no header but later segments exist`));
      await fs.rm(segment.path);
      segments.pop();
      continue;
    }
    if (id !== undefined && header !== id) return err(new JournalError('JournalCorrupt', `devnet journal segment ${segment.path} belongs to journal ${header}, not ${id}`));
    id = header;
    for (const record of records) {
      if ('method' in record) {
        entries.set(record.seq, record);
        lastSeq = Math.max(lastSeq, record.seq);
      } else {
        const entry = entries.get(record.seq);
        if (!entry) continue;
        // A later outcome of the same call (its receipt, once mined) completes the first one.
        entry.outcome = record.ok ? { ok: true, ...(record.result !== undefined && { result: record.result }) } : { ok: false, error: record.error };
        entry.answered ??= answers++;
      }
    }
    if (torn) await truncate(segment.path, goodBytes);
  }

  let current = segments.at(-1);
  const startSeq = Math.max(lastSeq + 1, current?.startSeq ?? 0);
  let fh: fs.FileHandle;
  if (id === undefined || current === undefined) {
    id = randomUUID();
    current = { startSeq, path: join(dir, segmentName(startSeq)) };
    fh = await createSegment(current.path, id);
    await fsyncDir(dir);
    segments.push(current);
  } else {
    fh = await fs.open(current.path, 'a', PRIVATE_FILE_MODE);
  }
  const journal = new SegmentedJournal(dir, id, segments, fh, startSeq);
  return ok({ journal, entries: [...entries.values()].sort((a, b) => a.seq - b.seq) });
}

/** Moves a journal aside (`<dir>.unusable`, replacing an older one): it cannot apply to the chain as it is. */
export async function setJournalAside(dir: string): Promise<string | undefined> {
  const aside = `${dir}.unusable`;
  try {
    await fs.rm(aside, { recursive: true, force: true });
    await fs.rename(dir, aside);
    return aside;
  } catch (error) {
    if ((error as NodeJS.ErrnoException).code === 'ENOENT') return undefined;
    throw error;
  }
}

type JournalRecord = JournalCall | { seq: number; ok: true; result?: unknown } | { seq: number; ok: false; error: { code: number; message: string } };

async function listSegments(dir: string): Promise<Segment[]> {
  const segments: Segment[] = [];
  for (const name of await fs.readdir(dir)) {
    const m = /^(\d{20})\.ndjson$/.exec(name);
    if (m?.[1]) segments.push({ startSeq: Number(m[1]), path: join(dir, name) });
  }
  return segments.sort((a, b) => a.startSeq - b.startSeq);
}

interface SegmentContents {
  header: string | undefined;
  records: JournalRecord[];
  goodBytes: number;
  torn: boolean;
}

async function readSegment(path: string, last: boolean): Promise<Result<SegmentContents, JournalError>> {
  const buf = await fs.readFile(path);
  const records: JournalRecord[] = [];
  let header: string | undefined;
  let offset = 0;
  let goodBytes = 0;
  while (offset < buf.length) {
    const nl = buf.indexOf(0x0a, offset);
    // Each line goes out in one write with its newline: a line without one was cut short.
    const parsed = nl < 0 ? undefined : parseLine(buf.toString('utf8', offset, nl));
    if (parsed === undefined || (header === undefined && !('journal' in parsed)) || (header !== undefined && 'journal' in parsed)) {
      const tornTail = last && (nl < 0 || nl === buf.length - 1);
      if (tornTail) return ok({ header, records, goodBytes, torn: true });
      return err(new JournalError('JournalCorrupt', `devnet journal segment ${path} is corrupt at byte ${offset}`));
    }
    if ('journal' in parsed) header = parsed.journal;
    else records.push(parsed);
    offset = nl + 1;
    goodBytes = offset;
  }
  return ok({ header, records, goodBytes, torn: false });
}

function parseLine(line: string): JournalRecord | { journal: string } | undefined {
  let value: unknown;
  try {
    value = JSON.parse(line);
  } catch {
    return undefined;
  }
  if (typeof value !== 'object' || value === null) return undefined;
  const v = value as { [k: string]: unknown };
  if (typeof v.journal === 'string') return { journal: v.journal };
  if (typeof v.seq !== 'number' || !Number.isSafeInteger(v.seq) || v.seq < 0) return undefined;
  if (typeof v.method === 'string') return { seq: v.seq, t: typeof v.t === 'number' ? v.t : 0, method: v.method, params: v.params };
  if (v.ok === true) return { seq: v.seq, ok: true, ...(v.result !== undefined && { result: v.result }) };
  const e = v.error as { code?: unknown; message?: unknown } | undefined;
  if (v.ok === false && typeof e?.code === 'number' && typeof e.message === 'string') return { seq: v.seq, ok: false, error: { code: e.code, message: e.message } };
  return undefined;
}

async function truncate(path: string, length: number): Promise<void> {
  const fh = await fs.open(path, 'r+');
  try {
    await fh.truncate(length);
    await fh.datasync();
  } finally {
    await fh.close();
  }
}

async function createSegment(path: string, id: string): Promise<fs.FileHandle> {
  const fh = await fs.open(path, 'a', PRIVATE_FILE_MODE);
  try {
    await fh.write(`${JSON.stringify({ journal: id })}\n`);
    await fh.datasync();
    return fh;
  } catch (error) {
    await fh.close().catch(() => undefined);
    throw error;
  }
}

interface Deferred {
  resolve(): void;
  reject(error: unknown): void;
}

type QueueItem = { kind: 'line'; line: string; sync: boolean; done: Deferred } | { kind: 'task'; run: () => Promise<void>; done: Deferred };

/**
 * Group commit: every line appended while a batch is being written (or in the same tick) goes out as the next
 * batch, in one write and, if it holds a call, one fdatasync. Rotations run between batches, in append order.
 * After a write fails nothing more is appended: what the file holds after the failure is unknown.
 */
class SegmentedJournal implements ChainJournal {
  #queue: QueueItem[] = [];
  #running = false;
  #failure: JournalError | undefined;
  #nextSeq: number;
  #closed: Promise<void> | undefined;

  constructor(
    readonly dir: string,
    readonly id: string,
    private readonly segments: Segment[],
    private fh: fs.FileHandle,
    nextSeq: number,
  ) {
    this.#nextSeq = nextSeq;
  }

  get nextSeq(): number {
    return this.#nextSeq;
  }

  get firstSeq(): number {
    return this.segments[0]!.startSeq;
  }

  append(calls: readonly { method: string; params: unknown }[]): { seqs: number[]; durable: Promise<void> } {
    const t = Date.now();
    const seqs = calls.map(() => this.#nextSeq++);
    const line = calls.map((c, i) => `${JSON.stringify({ seq: seqs[i], t, method: c.method, params: c.params })}\n`).join('');
    return { seqs, durable: this.#enqueue((done) => ({ kind: 'line', line, sync: true, done })) };
  }

  recordOutcome(seq: number, outcome: JournalOutcome): Promise<void> {
    return this.#enqueue((done) => ({ kind: 'line', line: `${JSON.stringify({ seq, ...outcome })}\n`, sync: false, done }));
  }

  rotate(keepFrom: number): Promise<void> {
    const startSeq = this.#nextSeq;
    return this.#enqueue((done) => ({ kind: 'task', run: () => this.#rotate(startSeq, keepFrom), done }));
  }

  close(): Promise<void> {
    return (this.#closed ??= this.#enqueue((done) => ({ kind: 'task', run: async () => {}, done }))
      .catch(() => undefined)
      .then(() => this.fh.close()));
  }

  #enqueue(make: (done: Deferred) => QueueItem): Promise<void> {
    if (this.#failure) return Promise.reject(this.#failure);
    if (this.#closed) return Promise.reject(new JournalError('JournalFailed', `devnet journal ${this.dir} is closed`));
    return new Promise<void>((resolve, reject) => {
      this.#queue.push(make({ resolve, reject }));
      if (!this.#running) {
        this.#running = true;
        // setImmediate rather than a microtask: every append of this tick joins the batch.
        setImmediate(() => void this.#drain());
      }
    });
  }

  async #drain(): Promise<void> {
    while (this.#queue.length > 0 && !this.#failure) {
      const head = this.#queue[0]!;
      if (head.kind === 'task') {
        this.#queue.shift();
        try {
          await head.run();
          head.done.resolve();
        } catch (error) {
          this.#fail(error, [head]);
        }
        continue;
      }
      const end = this.#queue.findIndex((item) => item.kind === 'task');
      const batch = this.#queue.splice(0, end < 0 ? this.#queue.length : end) as Extract<QueueItem, { kind: 'line' }>[];
      try {
        await this.fh.write(batch.map((item) => item.line).join(''));
        if (batch.some((item) => item.sync)) await this.fh.datasync();
      } catch (error) {
        this.#fail(error, batch);
        break;
      }
      for (const item of batch) item.done.resolve();
    }
    this.#running = false;
  }

  #fail(error: unknown, items: QueueItem[]): void {
    this.#failure = new JournalError('JournalFailed', `devnet journal ${this.dir} cannot be written: ${(error as Error).message}`, { cause: error });
    for (const item of [...items, ...this.#queue.splice(0)]) item.done.reject(this.#failure);
  }

  async #rotate(startSeq: number, keepFrom: number): Promise<void> {
    const current = this.segments.at(-1)!;
    if (startSeq > current.startSeq) {
      // The outcomes written since the last call's sync become durable with the old segment.
      await this.fh.datasync();
      const next = { startSeq, path: join(this.dir, segmentName(startSeq)) };
      const fh = await createSegment(next.path, this.id);
      await fsyncDir(this.dir);
      const old = this.fh;
      this.fh = fh;
      this.segments.push(next);
      await old.close();
    }
    // A segment holds only calls below the next one's start.
    let removed = false;
    while (this.segments.length > 1 && this.segments[1]!.startSeq <= keepFrom) {
      await fs.rm(this.segments.shift()!.path, { force: true });
      removed = true;
    }
    if (removed) await fsyncDir(this.dir);
  }
}
