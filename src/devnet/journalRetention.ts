import type { ChainJournal } from './journal.ts';
import { lowWater, type JournalMark } from './journalMark.ts';

/** A snapshot file on disk, by its mark; `mark` undefined: older than the journal, so it needs all of it. */
export interface KeptSnapshot {
  mark: JournalMark | undefined;
}

/**
 * Keeps the journal as small as the snapshots on disk allow: a start may load the current snapshot or, if that
 * one is torn, the previous one (stateFile.ts), so every call either of them may need stays. Mirrors
 * writeChainState's renames: a new snapshot makes the current one the previous one.
 */
export function journalRetention(journal: ChainJournal, onDisk: { current?: KeptSnapshot; previous?: KeptSnapshot }) {
  let { current, previous } = onDisk;
  const keepFrom = (): number =>
    Math.min(...[current, previous].filter((k) => k !== undefined).map((k) => (k.mark?.journal === journal.id ? lowWater(k.mark) : journal.firstSeq)));
  return {
    /** A snapshot with `mark` is on disk: starts a new journal segment and drops what no kept snapshot needs. */
    async saved(mark: JournalMark): Promise<void> {
      if (current) previous = current;
      current = { mark };
      await journal.rotate(keepFrom());
    },
  };
}
