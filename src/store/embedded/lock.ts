import { randomBytes } from 'node:crypto';
import { promises as fs } from 'node:fs';
import { hostname } from 'node:os';
import { join, resolve } from 'node:path';
import { StoreError } from '../types.ts';
import { fsyncDir } from './fsutil.ts';

/**
 * One process owns a store directory. The LOCK file records who: pid, the process's start time (so a pid
 * reused by an unrelated process is not mistaken for the owner) and the host. A lock whose owner is gone is
 * stale and is taken over; a live owner makes the open fail with Unavailable.
 */
export const LOCK_FILE = 'LOCK';

interface LockRecord {
  pid: number;
  /** /proc/<pid>/stat start time in clock ticks since boot (Linux); absent elsewhere. */
  startTime?: string;
  hostname: string;
  acquiredAt: string;
}

/** Directories this process holds, so a second open in the same process fails, and a lock left by an
 * earlier process that happened to have our pid (pid 1 in a container) is recognised as stale. */
const heldByThisProcess = new Set<string>();

export interface StoreLock {
  readonly dir: string;
  release(): Promise<void>;
}

export async function acquireStoreLock(dir: string): Promise<StoreLock> {
  const path = join(dir, LOCK_FILE);
  const mine: LockRecord = {
    pid: process.pid,
    startTime: await processStartTime(process.pid),
    hostname: hostname(),
    acquiredAt: new Date().toISOString(),
  };
  for (let attempt = 0; attempt < 20; attempt++) {
    try {
      const fh = await fs.open(path, 'wx');
      try {
        await fh.writeFile(JSON.stringify(mine) + '\n');
        await fh.sync();
      } finally {
        await fh.close();
      }
      await fsyncDir(dir);
      heldByThisProcess.add(dir);
      return { dir, release: () => releaseStoreLock(dir, mine) };
    } catch (e) {
      if (errno(e) !== 'EEXIST') throw e;
    }
    const seen = await readLock(path);
    if (seen === 'missing') continue;
    if (seen === 'unreadable') {
      // Created but not yet written: either its owner is writing it right now, or it died in between.
      if ((await ageMs(path)) < 2_000) {
        await sleep(50);
        continue;
      }
    } else if (await isAlive(dir, seen)) {
      throw ownedError(dir, seen.pid);
    }
    await takeOver(path, seen);
  }
  throw new StoreError('Unavailable', `could not acquire the lock of the store at ${dir}: it keeps changing`);
}

/**
 * Who owns the store directory, if a live process does. The keys CLI uses it to decide whether to talk to
 * the running service rather than open the store itself.
 */
export async function storeOwner(dir: string): Promise<{ pid: number } | undefined> {
  dir = await canonicalDir(dir);
  const seen = await readLock(join(dir, LOCK_FILE));
  if (seen === 'missing' || seen === 'unreadable') return undefined;
  return (await isAlive(dir, seen)) ? { pid: seen.pid } : undefined;
}

/** The directory's real absolute path: the identity of a store, however it was spelled. */
export async function canonicalDir(dir: string): Promise<string> {
  return fs.realpath(dir).catch(() => resolve(dir));
}

export function ownedError(dir: string, pid: number): StoreError {
  return new StoreError('Unavailable', `store at ${dir} is owned by pid ${pid}`, { details: { dir, pid } });
}

/**
 * Moves a stale lock aside under a unique name, so that of two processes taking over at once only one
 * moves it; if what we moved turns out to be a fresh lock (another process won the race in between), it is
 * put back with link(), which fails rather than overwrite.
 */
async function takeOver(path: string, seen: LockRecord | 'unreadable'): Promise<void> {
  const aside = `${path}.stale-${process.pid}-${randomBytes(4).toString('hex')}`;
  try {
    await fs.rename(path, aside);
  } catch (e) {
    if (errno(e) === 'ENOENT') return;
    throw e;
  }
  const moved = await readLock(aside);
  const sameAsSeen =
    moved === seen ||
    (typeof moved === 'object' && typeof seen === 'object' && JSON.stringify(moved) === JSON.stringify(seen));
  if (!sameAsSeen) {
    await fs.link(aside, path).catch(() => undefined);
  }
  await fs.unlink(aside).catch(() => undefined);
}

async function releaseStoreLock(dir: string, mine: LockRecord): Promise<void> {
  heldByThisProcess.delete(dir);
  const path = join(dir, LOCK_FILE);
  const seen = await readLock(path);
  if (typeof seen === 'object' && seen.pid === mine.pid && seen.acquiredAt === mine.acquiredAt) {
    await fs.unlink(path);
    await fsyncDir(dir);
  }
}

async function readLock(path: string): Promise<LockRecord | 'missing' | 'unreadable'> {
  let text: string;
  try {
    text = await fs.readFile(path, 'utf8');
  } catch (e) {
    if (errno(e) === 'ENOENT') return 'missing';
    throw e;
  }
  try {
    const rec = JSON.parse(text) as Partial<LockRecord>;
    if (typeof rec.pid !== 'number' || !Number.isInteger(rec.pid) || rec.pid <= 0) return 'unreadable';
    return {
      pid: rec.pid,
      hostname: typeof rec.hostname === 'string' ? rec.hostname : hostname(),
      acquiredAt: String(rec.acquiredAt ?? ''),
      ...(typeof rec.startTime === 'string' ? { startTime: rec.startTime } : {}),
    };
  } catch {
    return 'unreadable';
  }
}

async function isAlive(dir: string, rec: LockRecord): Promise<boolean> {
  // Another host's process cannot be checked from here: assume it is alive rather than risk two owners.
  if (rec.hostname !== hostname()) return true;
  if (rec.pid === process.pid) return heldByThisProcess.has(dir);
  try {
    process.kill(rec.pid, 0);
  } catch (e) {
    if (errno(e) === 'ESRCH') return false;
    // EPERM: it exists but belongs to someone else.
  }
  const stat = await procStat(rec.pid);
  if (stat === undefined) return true;
  if (stat.state === 'Z' || stat.state === 'X') return false;
  if (rec.startTime !== undefined && stat.startTime !== rec.startTime) return false; // pid reused
  return true;
}

async function processStartTime(pid: number): Promise<string | undefined> {
  return (await procStat(pid))?.startTime;
}

/** Fields 3 (state) and 22 (starttime) of /proc/<pid>/stat; undefined where there is no procfs. */
async function procStat(pid: number): Promise<{ state: string; startTime: string } | undefined> {
  let text: string;
  try {
    text = await fs.readFile(`/proc/${pid}/stat`, 'utf8');
  } catch {
    return undefined;
  }
  // The command name (field 2) is in parentheses and may contain spaces: split after the last ')'.
  const fields = text.slice(text.lastIndexOf(')') + 2).split(' ');
  const state = fields[0];
  const startTime = fields[19];
  return state !== undefined && startTime !== undefined ? { state, startTime } : undefined;
}

async function ageMs(path: string): Promise<number> {
  try {
    return Date.now() - (await fs.stat(path)).mtimeMs;
  } catch {
    return Number.POSITIVE_INFINITY;
  }
}

const sleep = (ms: number) => new Promise<void>((r) => setTimeout(r, ms));
export const errno = (e: unknown): string | undefined => (e as NodeJS.ErrnoException | undefined)?.code;
