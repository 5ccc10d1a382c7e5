import { markSnapshot, type JournalMark } from './journalMark.ts';
import type { NodeRpc } from './rpc.ts';
import { writeChainState, type ChainStateFiles } from './stateFile.ts';

/**
 * Ties the snapshots to the chain's journal (rpcProxy.ts, journalRetention.ts): each snapshot carries the mark
 * of the calls it holds, and once it is on disk the journal drops what no kept snapshot needs.
 */
export interface SnapshotCoverage {
  /** Runs the dump while the mark can be exact (no cheat call in flight) and returns the mark with it. */
  cover<T>(dump: () => Promise<T>): Promise<{ mark: JournalMark; value: T }>;
  /** Whether calls journaled since `mark` may have changed the state without a new block (anvil_setBalance). */
  changedSince(mark: JournalMark | undefined): boolean;
  /** The snapshot with `mark` is on disk. */
  saved(mark: JournalMark): Promise<void>;
}

export interface SnapshotterOptions {
  chain: string;
  rpc: NodeRpc;
  files: ChainStateFiles;
  /**
   * The head the files already hold (the block a restart loaded): no snapshot is written until the chain
   * moves past it. Undefined when there is no snapshot yet.
   */
  savedHead?: BlockHead;
  /** Without it, snapshots carry no journal mark (a bare anvil). */
  coverage?: SnapshotCoverage;
  /** The mark of the snapshot the files already hold (the one a restart loaded). */
  savedMark?: JournalMark;
  /** How often the head is checked. */
  pollMs?: number;
  /**
   * At most this share of the time goes to snapshots while the chain keeps moving: after a snapshot that
   * took `d` ms the next waits `d * (1 / maxDuty - 1)` ms. A dump grows with the chain's history, so a busy
   * long-lived chain is saved less often rather than saved back to back.
   */
  maxDuty?: number;
  log: (line: string) => void;
}

export interface BlockHead {
  number: number;
  hash: string;
}

export interface SnapshotStats {
  /** Head checks made. */
  polls: number;
  /** Snapshots written. */
  writes: number;
  /** The head when the last snapshot was taken (the snapshot holds at least this block). */
  savedHead: BlockHead | undefined;
  /** Size and duration (dump, write, fsync) of the last snapshot, and how much of it the dump took. */
  lastBytes: number;
  lastMs: number;
  lastDumpMs: number;
  /** Time spent on snapshots since the start. */
  totalMs: number;
}

export interface Snapshotter {
  stats(): SnapshotStats;
  /** Resolves after the next head check (lets tests count checks instead of waiting), or at stop. */
  nextPoll(): Promise<void>;
  /** Takes a snapshot now if the chain moved since the last one. */
  flush(): Promise<void>;
  /** Stops checking; with `final`, takes a last snapshot if the chain moved. */
  stop(opts: { final: boolean }): Promise<void>;
}

/**
 * Each check is one small JSON-RPC call. Measured on a shared 2-core machine with three idle chains: checks
 * every 100 ms cost this process 3–3.7 % of a core, every 250 ms ≈ 1 %, none 0.1 %; each anvil ≈ 0.1 %.
 * (anvil's own `--state-interval 1` took 10–13 % of a core per idle chain with 2,000 transactions.)
 */
export const DEFAULT_SNAPSHOT_POLL_MS = 250;
export const DEFAULT_SNAPSHOT_MAX_DUTY = 0.2;
const HASH_CHECK_EVERY = 10;

/**
 * Keeps one anvil's state on disk: checks the chain's height every `pollMs` and, when it moved since the last
 * snapshot, takes one through `anvil_dumpState` (gzipped JSON) and writes it atomically. An idle chain is
 * never rewritten. A snapshot alone would lose, at a hard kill, the blocks mined after it started (at most
 * `pollMs` + the pause that `maxDuty` imposes + one snapshot's duration) and the changes that mine no block;
 * with `coverage`, the journal holds those and a restart replays them (replay.ts).
 */
export function startSnapshotter(opts: SnapshotterOptions): Snapshotter {
  const pollMs = opts.pollMs ?? DEFAULT_SNAPSHOT_POLL_MS;
  const maxDuty = opts.maxDuty ?? DEFAULT_SNAPSHOT_MAX_DUTY;
  const stats: SnapshotStats = { polls: 0, writes: 0, savedHead: opts.savedHead, lastBytes: 0, lastMs: 0, lastDumpMs: 0, totalMs: 0 };
  let notBefore = 0;
  let stopped = false;
  let timer: NodeJS.Timeout | undefined;
  let running: Promise<void> | undefined;
  let failing = false;
  let checksSinceHash = 0;
  let pollWaiters: Array<() => void> = [];
  let savedMark = opts.savedMark;

  const snapshot = async (head: BlockHead): Promise<void> => {
    const started = performance.now();
    // The head is read before the dump, so the dump holds at least it; a block mined in between shows up as
    // a moved head at the next check and is saved then.
    const dump = () => opts.rpc.call<string>('anvil_dumpState', []);
    const { mark, value: hex } = opts.coverage ? await opts.coverage.cover(dump) : { mark: undefined, value: await dump() };
    const dumped = performance.now();
    const gzipped = Buffer.from(hex.startsWith('0x') ? hex.slice(2) : hex, 'hex');
    const bytes = mark ? markSnapshot(gzipped, mark) : gzipped;
    await writeChainState(opts.files, bytes);
    if (mark) {
      savedMark = mark;
      await opts.coverage!.saved(mark);
    }
    const ms = performance.now() - started;
    stats.writes++;
    stats.savedHead = head;
    stats.lastBytes = bytes.length;
    stats.lastMs = ms;
    stats.lastDumpMs = dumped - started;
    stats.totalMs += ms;
    notBefore = performance.now() + ms * (1 / maxDuty - 1);
  };

  /**
   * Whether the chain moved since the last snapshot, and its head if it did. The height alone is half the
   * price of the latest block (measured: 0.24 vs 0.47 ms of this process's CPU per check); the hash, which
   * also catches a revert followed by as many new blocks, is compared on forced checks and every
   * HASH_CHECK_EVERY-th one.
   */
  const moved = async (force: boolean): Promise<BlockHead | undefined> => {
    const saved = stats.savedHead;
    // A journaled cheat call may have changed state without a block: that is a move too.
    const changed = opts.coverage?.changedSince(savedMark) ?? false;
    if (!force && !changed && saved && ++checksSinceHash < HASH_CHECK_EVERY) {
      const height = Number(await opts.rpc.call<string>('eth_blockNumber'));
      if (height === saved.number) return undefined;
    }
    checksSinceHash = 0;
    const head = await latestHead(opts.rpc);
    return head.hash === saved?.hash && !changed ? undefined : head;
  };

  /** One check: snapshot if the chain moved (and, unless forced, the duty pause is over). */
  const check = async (force: boolean): Promise<void> => {
    if (!force && performance.now() < notBefore) return;
    try {
      const head = await moved(force);
      stats.polls++;
      if (head) await snapshot(head);
      if (failing) opts.log(`devnet: ${opts.chain} chain state snapshots work again`);
      failing = false;
    } catch (error) {
      // Logged once per outage: the files on disk still hold the last good snapshot.
      if (!failing && !stopped) opts.log(`devnet: ${opts.chain} chain state snapshot failed: ${(error as Error).message}`);
      failing = true;
      if (force) throw error;
    } finally {
      wakePollWaiters();
    }
  };

  const wakePollWaiters = (): void => {
    const waiters = pollWaiters;
    pollWaiters = [];
    for (const wake of waiters) wake();
  };

  // One check at a time: a forced one (flush, final) waits for the one in progress, then runs its own.
  const exclusive = (force: boolean): Promise<void> => {
    const next = (running ?? Promise.resolve()).then(() => check(force));
    const settled = next.catch(() => undefined);
    running = settled;
    void settled.then(() => {
      if (running === settled) running = undefined;
    });
    return next;
  };

  const schedule = (): void => {
    if (stopped) return;
    timer = setTimeout(() => {
      void exclusive(false).finally(schedule);
    }, pollMs);
    timer.unref();
  };
  schedule();

  return {
    stats: () => ({ ...stats }),
    nextPoll: () => new Promise<void>((resolve) => pollWaiters.push(resolve)),
    flush: () => exclusive(true),
    async stop({ final }) {
      if (stopped) return;
      stopped = true;
      clearTimeout(timer);
      if (final) await exclusive(true);
      else await running;
      wakePollWaiters();
    },
  };
}

/** The node's latest block: its number and hash (the hash also moves when a revert is followed by new blocks). */
export async function latestHead(rpc: NodeRpc): Promise<BlockHead> {
  const block = await rpc.call<{ number: string; hash: string } | null>('eth_getBlockByNumber', ['latest', false]);
  if (!block) throw new Error('the node has no latest block');
  return { number: Number(block.number), hash: block.hash };
}
