import { keccak256, type Hex } from 'viem';
import { err, ok, type Result } from '../lib/result.ts';
import { isReceiptDigest, type JournalEntry } from './journal.ts';
import type { JournalMark } from './journalMark.ts';
import type { NodeRpc } from './rpc.ts';
import { rpcMethodKind } from './rpcMethods.ts';

/**
 * Replays onto a freshly loaded chain the journal's calls that its snapshot does not hold (journalMark.ts says
 * which), in journal order, so that whatever anyone was answered before a crash holds again:
 * - a raw transaction already on the chain (by hash) is skipped; any other is sent again (same bytes, same
 *   hash) and, with automine on, mined before the next call. Sends between two writes go in the order of the
 *   blocks their receipts named, where the journal has one, and those that shared a block share one again;
 * - a write (cheat call) is sent as it was; evm_revert's snapshot ids are mapped to the ones evm_snapshot
 *   returns now;
 * - a call that anvil refused before the crash changed nothing and is not replayed.
 * Block numbers and timestamps may differ from before; hashes and outcomes may not. Where the journal holds
 * an answer that the replay contradicts (a transaction given a receipt that anvil now refuses, or that ends
 * with another status or gas; an evm_revert that cannot be repeated), the replay stops and says why.
 */
export interface ReplaySummary {
  /** Calls sent to anvil again. */
  replayed: number;
  /** Sends already on the chain. */
  present: number;
  /** Calls refused before the crash (not sent), or refused again and never answered as accepted. */
  dropped: number;
  /** Sends left in anvil's pool (automine off, or a nonce gap): still to be mined, as they were. */
  pending: Array<{ seq: number; raw: Hex }>;
  /** The highest seq replayed, or -1. */
  lastSeq: number;
}

export interface ReplayRefusal {
  seq: number;
  method: string;
  /** The transaction's hash, for a send. */
  hash?: Hex;
  reason: string;
}

export interface ReplayOptions {
  /** A client of anvil itself (not the proxy: nothing replayed is journaled again). */
  rpc: NodeRpc;
  entries: readonly JournalEntry[];
  /** The loaded snapshot's mark; undefined for a snapshot older than the journal, which holds none of it. */
  mark: JournalMark | undefined;
  log?: (line: string) => void;
}

const RECEIPT_POLL_MS = 2;
const MINING_TIMEOUT_MS = 10_000;

export async function replayJournal(opts: ReplayOptions): Promise<Result<ReplaySummary, ReplayRefusal>> {
  const { rpc, mark } = opts;
  const unsettled = new Set(mark?.unsettled ?? []);
  const due = opts.entries.filter((e) => e.seq >= (mark?.seq ?? 0) || unsettled.has(e.seq));
  const summary: ReplaySummary = { replayed: 0, present: 0, dropped: 0, pending: [], lastSeq: -1 };
  if (due.length === 0) return ok(summary);
  const started = performance.now();

  let automine = mark?.automine ?? true;
  // A fresh anvil automines; the chain may have been told otherwise before the snapshot.
  if (!automine) await rpc.call('evm_setAutomine', [false]);
  const snapshotIds = new Map<string, unknown>();
  /** Sends not mined when replayed (pool, nonce gap): checked once everything is replayed. */
  const unmined: Array<{ entry: JournalEntry; raw: Hex; hash: Hex }> = [];

  const refuse = (entry: JournalEntry, reason: string, hash?: Hex): Result<never, ReplayRefusal> =>
    err({ seq: entry.seq, method: entry.method, ...(hash && { hash }), reason });

  const sameOutcome = async (entry: JournalEntry, hash: Hex): Promise<Result<boolean, ReplayRefusal>> => {
    const receipt = await rpc.call<{ status: string; gasUsed: string } | null>('eth_getTransactionReceipt', [hash]);
    if (!receipt) return ok(false);
    const before = entry.outcome?.ok ? entry.outcome.result : undefined;
    if (isReceiptDigest(before) && (before.status !== receipt.status || before.gasUsed !== receipt.gasUsed)) {
      return refuse(entry, `it ended with status ${before.status} and used ${Number(before.gasUsed)} gas before the crash; replayed, status ${receipt.status} and ${Number(receipt.gasUsed)} gas`, hash);
    }
    return ok(true);
  };

  /**
   * Hands one send to anvil again unless it is on the chain or was refused before. Returns the transaction to
   * check once mined, or undefined when there is nothing to check.
   */
  const submit = async (entry: JournalEntry): Promise<Result<{ raw: Hex; hash: Hex } | undefined, ReplayRefusal>> => {
    const raw = rawParam(entry.params);
    const before = entry.outcome;
    if (raw === undefined) {
      if (before?.ok) return refuse(entry, 'its parameters hold no raw transaction, yet anvil accepted it');
      summary.dropped++;
      return ok(undefined);
    }
    const hash = keccak256(raw);
    if (await rpc.call<unknown>('eth_getTransactionByHash', [hash])) {
      summary.present++;
      return ok(undefined);
    }
    // Refused then (a timeout of eth_sendRawTransactionSync is no refusal: the transaction waited in the pool).
    if (before && !before.ok && !/timeout/i.test(before.error.message)) {
      summary.dropped++;
      return ok(undefined);
    }
    try {
      await rpc.call('eth_sendRawTransaction', [raw]);
    } catch (error) {
      const message = (error as Error).message;
      const receiptGiven = before?.ok === true && isReceiptDigest(before.result);
      // Nobody was told it was accepted, or its nonce went to another transaction (a replacement) before the
      // crash as now: it was never mined, and is not now.
      if (!receiptGiven && (before?.ok !== true || /nonce too low/i.test(message))) {
        summary.dropped++;
        return ok(undefined);
      }
      return refuse(entry, `anvil accepted it before the crash${receiptGiven ? ' and mined it' : ''}, and refuses it now: ${message}`, hash);
    }
    summary.replayed++;
    return ok({ raw, hash });
  };

  /** After mining: checks each submitted send, or keeps it for the end if it is not mined (yet). */
  const check = async (submitted: Array<{ entry: JournalEntry; raw: Hex; hash: Hex }>): Promise<Result<void, ReplayRefusal>> => {
    for (const s of submitted) {
      const checked = await sameOutcome(s.entry, s.hash);
      if (!checked.ok) return checked;
      if (!checked.value) unmined.push(s);
    }
    return ok(undefined);
  };

  /**
   * Sends that anvil mined into one block before (their receipts name it): into one block again, so that the
   * blocks that follow have the base fees they had. Otherwise, with automine on, each is mined on its own.
   */
  const replaySends = async (group: JournalEntry[]): Promise<Result<void, ReplayRefusal>> => {
    const oneBlock = automine && group.length > 1;
    if (oneBlock) await rpc.call('evm_setAutomine', [false]);
    const submitted: Array<{ entry: JournalEntry; raw: Hex; hash: Hex }> = [];
    try {
      for (const entry of group) {
        const done = await submit(entry);
        if (!done.ok) return done;
        if (done.value) submitted.push({ entry, ...done.value });
      }
      if (oneBlock && submitted.length > 0) await rpc.call('evm_mine');
    } finally {
      if (oneBlock) await rpc.call('evm_setAutomine', [true]);
    }
    if (!automine) {
      unmined.push(...submitted);
      return ok(undefined);
    }
    if (submitted.length > 0) await minedOrQueued(rpc);
    return check(submitted);
  };

  const replayWrite = async (entry: JournalEntry): Promise<Result<void, ReplayRefusal>> => {
    const before = entry.outcome;
    if (before && !before.ok) {
      summary.dropped++;
      return ok(undefined);
    }
    let params = entry.params;
    if (entry.method === 'evm_revert' && Array.isArray(params)) {
      const mapped = snapshotIds.get(snapshotIdKey(params[0]));
      if (mapped === undefined) {
        // The snapshot it went back to was taken before the loaded state: anvil keeps those ids in memory only.
        if (before?.ok && before.result === false) {
          summary.dropped++;
          return ok(undefined);
        }
        return refuse(entry, `it went back to evm_snapshot ${JSON.stringify(params[0])}, taken before the last saved state, which a new anvil cannot go back to`);
      }
      params = [mapped, ...params.slice(1)];
    }
    let result: unknown;
    try {
      // By-name parameters (an object) go as they came.
      result = await rpc.call<unknown>(entry.method, (params ?? []) as unknown[]);
    } catch (error) {
      if (!before) {
        // Never answered: nobody saw it succeed.
        summary.dropped++;
        return ok(undefined);
      }
      return refuse(entry, `it succeeded before the crash and fails now: ${(error as Error).message}`);
    }
    summary.replayed++;
    if (entry.method === 'evm_setAutomine' && Array.isArray(params)) automine = params[0] === true;
    if (entry.method === 'evm_snapshot' && before?.ok) snapshotIds.set(snapshotIdKey(before.result), result);
    if (before?.ok) {
      const then = before.result;
      if (entry.method === 'evm_revert' && then !== result) return refuse(entry, `it answered ${String(then)} before the crash and ${String(result)} now`);
      if (isReceiptDigest(then) && isReceiptDigest(result) && (then.transactionHash !== result.transactionHash || then.status !== result.status)) {
        return refuse(entry, `it mined ${then.transactionHash} (status ${then.status}) before the crash and ${result.transactionHash} (status ${result.status}) now`);
      }
      if (typeof then === 'string' && /^0x[0-9a-f]{64}$/i.test(then) && typeof result === 'string' && then.toLowerCase() !== result.toLowerCase()) {
        return refuse(entry, `it sent transaction ${then} before the crash and ${result} now`);
      }
    }
    return ok(undefined);
  };

  const ordered = inReplayOrder(due);
  for (let i = 0; i < ordered.length; ) {
    const entry = ordered[i]!;
    let group = [entry];
    if (rpcMethodKind(entry.method) === 'send') {
      const block = blockOf(entry);
      while (block !== undefined && i + group.length < ordered.length && blockOf(ordered[i + group.length]!) === block) group.push(ordered[i + group.length]!);
    }
    const done = rpcMethodKind(entry.method) === 'send' ? await replaySends(group) : await replayWrite(entry);
    if (!done.ok) return done;
    for (const e of group) summary.lastSeq = Math.max(summary.lastSeq, e.seq);
    i += group.length;
  }

  // Mined since (a later evm_mine, or the nonce gap filled): each must match what it was answered before.
  if (automine) await minedOrQueued(rpc);
  for (const u of unmined) {
    const checked = await sameOutcome(u.entry, u.hash);
    if (!checked.ok) return checked;
    if (checked.value) continue;
    const before = u.entry.outcome;
    if (before?.ok && isReceiptDigest(before.result)) {
      return refuse(u.entry, `it was mined (block ${Number(before.result.blockNumber)}) before the crash; replayed, it waits in anvil's pool`, u.hash);
    }
    summary.pending.push({ seq: u.entry.seq, raw: u.raw });
  }
  opts.log?.(
    `replayed ${summary.replayed} journaled call(s) the snapshot did not hold in ${Math.round(performance.now() - started)} ms` +
      (summary.present > 0 ? `; ${summary.present} transaction(s) were in it` : '') +
      (summary.dropped > 0 ? `; ${summary.dropped} refused call(s) left out as before` : '') +
      (summary.pending.length > 0 ? `; ${summary.pending.length} transaction(s) wait in the pool as before` : ''),
  );
  return ok(summary);
}

/**
 * Journal order (the order calls reached the proxy), except within each run of sends between two writes:
 * concurrent sends reach anvil in any order, and the blocks' order is what fixed each one's base fee. So those
 * whose receipt named a block take their places in the order of those blocks, and those answered without a
 * receipt (eth_sendRawTransaction: taken into the pool, then mined in that order) in the order of the answers.
 * Sends never answered (the crash came first) keep their places: where anvil put them is not known, and the
 * order they arrived in is the best guess (anvil may answer two back-to-back blocks in either order).
 */
export function inReplayOrder(entries: readonly JournalEntry[]): JournalEntry[] {
  const out = [...entries];
  let start = 0;
  const sortSlots = (end: number, has: (e: JournalEntry) => boolean, compare: (a: JournalEntry, b: JournalEntry) => number): void => {
    const slots: number[] = [];
    for (let i = start; i < end; i++) if (has(out[i]!)) slots.push(i);
    const sorted = slots.map((i) => out[i]!).sort((a, b) => compare(a, b) || a.seq - b.seq);
    slots.forEach((slot, k) => (out[slot] = sorted[k]!));
  };
  const sortRun = (end: number): void => {
    sortSlots(end, (e) => blockOf(e) !== undefined, (a, b) => blockOf(a)! - blockOf(b)! || indexInBlock(a) - indexInBlock(b));
    sortSlots(end, (e) => blockOf(e) === undefined && e.outcome?.ok === true, (a, b) => (a.answered ?? 0) - (b.answered ?? 0));
  };
  for (let i = 0; i < out.length; i++) {
    if (rpcMethodKind(out[i]!.method) === 'send') continue;
    sortRun(i);
    start = i + 1;
  }
  sortRun(out.length);
  return out;
}

/** The block a send's receipt named, if the journal holds one. */
function blockOf(e: JournalEntry): number | undefined {
  return rpcMethodKind(e.method) === 'send' && e.outcome?.ok && isReceiptDigest(e.outcome.result) ? Number(e.outcome.result.blockNumber) : undefined;
}

function indexInBlock(e: JournalEntry): number {
  const r = e.outcome?.ok ? e.outcome.result : undefined;
  return isReceiptDigest(r) && r.transactionIndex !== undefined ? Number(r.transactionIndex) : 0;
}

/** With automine on: waits until anvil has mined every ready transaction. False if it did not in time. */
async function minedOrQueued(rpc: NodeRpc): Promise<boolean> {
  const deadline = Date.now() + MINING_TIMEOUT_MS;
  for (;;) {
    const pool = await rpc.call<{ pending: Hex }>('txpool_status');
    if (Number(pool.pending) === 0) return true;
    if (Date.now() > deadline) return false;
    await new Promise((resolve) => setTimeout(resolve, RECEIPT_POLL_MS));
  }
}

function rawParam(params: unknown): Hex | undefined {
  const raw = Array.isArray(params) ? params[0] : undefined;
  return typeof raw === 'string' && /^0x[0-9a-fA-F]+$/.test(raw) ? (raw as Hex) : undefined;
}

/** Snapshot ids compared as numbers ("0x1" and 1 are the same id). */
function snapshotIdKey(id: unknown): string {
  try {
    return BigInt(id as string).toString();
  } catch {
    return JSON.stringify(id);
  }
}
