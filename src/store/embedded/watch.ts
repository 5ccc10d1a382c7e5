import type { Kind } from '../../api/v1alpha1/index.ts';
import { StoreError, type WatchEvent, type WatchEventType, type WatchHandle, type WatchOptions } from '../types.ts';
import { matchesLabels } from '../../api/v1alpha1/names.ts';

/** A committed change, as the watch hub keeps it: the object stays serialized until a watcher needs a copy. */
export interface ChangeEvent {
  rev: number;
  type: WatchEventType;
  kind: Kind;
  namespace: string;
  json: string;
  labels: Readonly<Record<string, string>> | undefined;
  /** For MODIFIED: the labels before the change, so a selector watch can turn it into ADDED or DELETED. */
  prevLabels?: Readonly<Record<string, string>> | undefined;
}

/**
 * Ring of the most recent events, in revision order, holding at most `capacity` events and, beyond the newest,
 * at most `maxBytes` of their objects' JSON: each event holds the whole object at its revision, so a count alone
 * lets the history grow to 50,000 objects (≈ 150 MiB of requests) whatever the live data.
 */
class History {
  private readonly buf: (ChangeEvent | undefined)[];
  private start = 0;
  private size = 0;
  /** UTF-16 code units of the events' JSON (bytes for the ASCII our objects are, as V8 keeps them). */
  private chars = 0;

  constructor(
    readonly capacity: number,
    private readonly maxBytes: number,
  ) {
    this.buf = new Array<ChangeEvent | undefined>(capacity);
  }

  /** Appends; returns the revision of the last event evicted to make room, if any was. */
  push(ev: ChangeEvent): number | undefined {
    let evicted: number | undefined;
    if (this.size === this.capacity) evicted = this.shift();
    this.buf[(this.start + this.size) % this.capacity] = ev;
    this.size++;
    this.chars += ev.json.length;
    while (this.chars > this.maxBytes && this.size > 1) evicted = this.shift();
    return evicted;
  }

  private shift(): number {
    const ev = this.buf[this.start]!;
    this.buf[this.start] = undefined;
    this.start = (this.start + 1) % this.capacity;
    this.size--;
    this.chars -= ev.json.length;
    return ev.rev;
  }

  get stats(): { events: number; bytes: number } {
    return { events: this.size, bytes: this.chars };
  }

  private at(i: number): ChangeEvent {
    return this.buf[(this.start + i) % this.capacity] as ChangeEvent;
  }

  /** Events with a revision above `rev`, oldest first. */
  *after(rev: number): Generator<ChangeEvent> {
    let lo = 0;
    let hi = this.size;
    while (lo < hi) {
      const mid = (lo + hi) >>> 1;
      if (this.at(mid).rev <= rev) lo = mid + 1;
      else hi = mid;
    }
    for (let i = lo; i < this.size; i++) yield this.at(i);
  }
}

class Watcher {
  private queue: { type: WatchEventType; json: string }[] = [];
  private scheduled = false;
  private ended = false;
  readonly done: Promise<void>;
  private resolveDone!: () => void;
  private rejectDone!: (e: unknown) => void;

  constructor(
    readonly kind: Kind,
    private readonly opts: WatchOptions,
    private readonly onEvent: (event: WatchEvent<never>) => void,
    private readonly onEnd: (w: Watcher) => void,
  ) {
    this.done = new Promise<void>((resolve, reject) => {
      this.resolveDone = resolve;
      this.rejectDone = reject;
    });
    // Ending is part of a watch's life, not a crash: keep an ignored `done` from becoming an unhandled
    // rejection. Whoever awaits `done` still sees the error.
    this.done.catch(() => undefined);
  }

  /** Queues the event if it concerns this watch, translated for label-selector transitions. */
  offer(ev: ChangeEvent): void {
    if (this.ended || ev.kind !== this.kind) return;
    if (this.opts.namespace !== undefined && ev.namespace !== this.opts.namespace) return;
    let type: WatchEventType | undefined = ev.type;
    const selector = this.opts.labelSelector;
    if (selector !== undefined) {
      const now = matchesLabels(ev.labels, selector);
      if (ev.type === 'MODIFIED') {
        const before = matchesLabels(ev.prevLabels, selector);
        type = now && before ? 'MODIFIED' : now ? 'ADDED' : before ? 'DELETED' : undefined;
      } else if (!now) {
        type = undefined;
      }
    }
    if (type === undefined) return;
    this.queue.push({ type, json: ev.json });
    if (!this.scheduled) {
      this.scheduled = true;
      // Never deliver inside the call that caused the change (or inside watch() itself).
      setImmediate(() => this.deliver());
    }
  }

  private deliver(): void {
    this.scheduled = false;
    const batch = this.queue;
    this.queue = [];
    for (const { type, json } of batch) {
      if (this.ended) return;
      try {
        this.onEvent({ type, object: JSON.parse(json) as never });
      } catch (cause) {
        this.end(new StoreError('Unavailable', `watch of ${this.kind} ended: its event handler threw`, { cause }));
        return;
      }
    }
  }

  stop(): void {
    if (this.ended) return;
    this.ended = true;
    this.queue = [];
    this.onEnd(this);
    this.resolveDone();
  }

  end(error: StoreError): void {
    if (this.ended) return;
    this.ended = true;
    this.queue = [];
    this.onEnd(this);
    this.rejectDone(error);
  }
}

/**
 * Keeps the recent history and the open watches. A watch from a revision still in the history replays what
 * came after it, then continues live; from an older one it ends with Gone and the caller re-lists.
 */
export class WatchHub {
  private readonly history: History;
  private readonly watchers = new Set<Watcher>();
  /** Every event after this revision is in the history; events at or below it may not be. */
  private oldestServable: number;
  private latest: number;

  constructor(capacity: number, maxBytes: number, currentRevision: number) {
    this.history = new History(Math.max(1, capacity), maxBytes);
    this.oldestServable = currentRevision;
    this.latest = currentRevision;
  }

  /**
   * Seeds the history at open with an event replayed from the log, in order (the history reaches back to the
   * revision the hub was made at: the snapshot's).
   */
  seed(ev: ChangeEvent): void {
    this.record(ev);
  }

  publish(events: readonly ChangeEvent[]): void {
    for (const ev of events) {
      this.record(ev);
      for (const w of this.watchers) w.offer(ev);
    }
  }

  private record(ev: ChangeEvent): void {
    const evicted = this.history.push(ev);
    if (evicted !== undefined) this.oldestServable = evicted;
    this.latest = ev.rev;
  }

  /**
   * `initial` is what a watch from "0" starts with (the API server's synthetic ADDED of every current
   * object); the caller takes it at the latest published revision, in the same synchronous step.
   */
  watch(
    kind: Kind,
    opts: WatchOptions,
    onEvent: (event: WatchEvent<never>) => void,
    initial: () => ChangeEvent[],
  ): WatchHandle {
    const w = new Watcher(kind, opts, onEvent, (x) => this.watchers.delete(x));
    const handle: WatchHandle = { stop: () => w.stop(), done: w.done };
    let from = this.latest;
    if (opts.resourceVersion === '0') {
      for (const ev of initial()) w.offer(ev);
    } else if (opts.resourceVersion !== undefined && opts.resourceVersion !== '') {
      from = Number(opts.resourceVersion);
      if (!Number.isSafeInteger(from) || from < 0) {
        w.end(new StoreError('Invalid', `invalid resourceVersion ${JSON.stringify(opts.resourceVersion)}`));
        return handle;
      }
      if (from < this.oldestServable) {
        w.end(
          new StoreError('Gone', `too old resource version: ${from} (oldest available ${this.oldestServable})`, {
            details: { resourceVersion: opts.resourceVersion, oldest: String(this.oldestServable) },
          }),
        );
        return handle;
      }
      for (const ev of this.history.after(from)) w.offer(ev);
    }
    this.watchers.add(w);
    return handle;
  }

  /** Ends every watch (store closed or failed). */
  endAll(error: StoreError): void {
    for (const w of [...this.watchers]) w.end(error);
  }

  get historyStats(): { events: number; bytes: number } {
    return this.history.stats;
  }

  get watchCount(): number {
    return this.watchers.size;
  }
}
