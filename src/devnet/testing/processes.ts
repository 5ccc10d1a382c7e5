/** Test helpers: which anvil processes are alive, found through /proc (Linux). */
import { readdirSync, readFileSync } from 'node:fs';
import { join } from 'node:path';
import { devnetNodeMarker } from '../pidfile.ts';

/** Running, and not a zombie waiting for a reaper (an exited orphan is gone for our purposes). */
export function isRunning(pid: number): boolean {
  try {
    process.kill(pid, 0);
  } catch {
    return false;
  }
  try {
    return !/^\d+ \(.*\) Z/.test(readFileSync(`/proc/${pid}/stat`, 'utf8'));
  } catch {
    return false;
  }
}

/**
 * Every running anvil that serves a chain state under `dataDir`, recorded in a pid file or not (a start that
 * failed half-way may never have written one).
 */
export function devnetAnvilPids(dataDir: string): number[] {
  const prefix = join(dataDir, 'devnet') + '/';
  return readdirSync('/proc')
    .filter((entry) => /^\d+$/.test(entry))
    .map(Number)
    .filter((pid) => devnetNodeMarker(pid)?.startsWith(prefix) && isRunning(pid));
}
