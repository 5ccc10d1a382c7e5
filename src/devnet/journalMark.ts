import { z } from 'zod';
import { gzipComment, withGzipComment } from './gzipComment.ts';

/**
 * Which of the journal's calls a snapshot holds (journal.ts, rpcProxy.ts's `coverage`). Writes (cheat calls)
 * never overlap a dump, so they split exactly at `seq`; sends do not wait for one, so those that may or may
 * not be in it are checked by their hash at replay.
 */
export const JournalMarkSchema = z.object({
  /** The journal's id. */
  journal: z.string().min(1),
  /**
   * Every write below it is in the snapshot and none from it on. Sends below it are in it too (mined, or
   * refused, or since undone by a write that is in it), except `unsettled`; sends from it on may be.
   */
  seq: z.number().int().nonnegative(),
  /** Sends below `seq` not yet answered, or waiting in anvil's pool, when the snapshot was taken. */
  unsettled: z.array(z.number().int().nonnegative()),
  /** anvil's automine setting then: a mining mode, not chain state, so not in anvil's dump. */
  automine: z.boolean(),
});
export type JournalMark = z.infer<typeof JournalMarkSchema>;

const PREFIX = 'agent-wallet devnet journal mark ';

/** The first call a replay onto this snapshot may need; the journal keeps every call from it on. */
export function lowWater(mark: JournalMark): number {
  return Math.min(mark.seq, ...mark.unsettled);
}

/** The snapshot's gzipped bytes with its mark in the gzip header's comment. */
export function markSnapshot(gzipped: Uint8Array, mark: JournalMark): Buffer {
  return withGzipComment(gzipped, PREFIX + JSON.stringify(mark));
}

export type SnapshotMark = { ok: true; mark: JournalMark | undefined } | { ok: false; reason: string };

/** The mark a snapshot carries; `undefined` for one written before the journal existed. */
export function readSnapshotMark(gzipped: Uint8Array): SnapshotMark {
  let comment: string | undefined;
  try {
    comment = gzipComment(gzipped);
  } catch (error) {
    return { ok: false, reason: (error as Error).message };
  }
  if (comment === undefined || !comment.startsWith(PREFIX)) return { ok: true, mark: undefined };
  try {
    const parsed = JournalMarkSchema.safeParse(JSON.parse(comment.slice(PREFIX.length)));
    if (parsed.success) return { ok: true, mark: parsed.data };
  } catch {
    // reported below
  }
  return { ok: false, reason: 'its journal mark is garbled' };
}
