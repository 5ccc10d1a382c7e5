import { randomBytes } from 'node:crypto';
import { promises as fs } from 'node:fs';
import type { FileHandle } from 'node:fs/promises';
import { hostname } from 'node:os';
import { join, resolve } from 'node:path';
import { StoreError } from '../types.ts';
import { fsyncDir } from '../../lib/fs.ts';
import { openPrivateFile } from '../../lib/privateFs.ts';

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
  for (let attempt = 0; attempt < 100; attempt++) {
    try {
      const fh = await openPrivateFile(path, 'wx');
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
    if (seen.rec === 'unreadable') {
      // Created but not yet written: either its owner is writing it right now, or it died in between.
      if (Date.now() - seen.mtimeMs < 2_000) {
        await sleep(50);
        continue;
      }
    } else if (await isAlive(dir, seen.rec)) {
      throw ownedError(dir, seen.rec.pid);
    }
    await takeOver(dir, path, seen.ino);
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
  if (seen === 'missing' || seen.rec === 'unreadable') return undefined;
  return (await isAlive(dir, seen.rec)) ? { pid: seen.rec.pid } : undefined;
}

/** The directory's real absolute path: the identity of a store, however it was spelled. */
export async function canonicalDir(dir: string): Promise<string> {
  return fs.realpath(dir).catch(() => resolve(dir));
}

export function ownedError(dir: string, pid: number): StoreError {
  return new StoreError('Unavailable', `store at ${dir} is owned by pid ${pid}`, { details: { dir, pid } });
}

/**
 * Removes a stale lock. Only the holder of LOCK.takeover (created exclusively) may remove LOCK, and it
 * first checks that LOCK is still the very file judged stale (same inode): a lock cannot be created over
 * an existing one, so between that check and the unlink nobody else can have replaced it. The caller then
 * races for LOCK with an exclusive create, as on a free directory.
 */
async function takeOver(dir: string, path: string, staleIno: number): Promise<void> {
  const mutex = `${path}.takeover`;
  try {
    const fh = await openPrivateFile(mutex, 'wx');
    try {
      await fh.writeFile(JSON.stringify({ pid: process.pid, hostname: hostname(), startTime: await processStartTime(process.pid) }));
    } finally {
      await fh.close();
    }
  } catch (e) {
    if (errno(e) !== 'EEXIST') throw e;
    const holder = await readLock(mutex);
    if (holder === 'missing') return;
    const holderAlive =
      holder.rec === 'unreadable'
        ? Date.now() - holder.mtimeMs < 2_000
        : holder.rec.pid === process.pid
          ? takingOver.has(dir)
          : await isAlive(dir, holder.rec);
    if (holderAlive) await sleep(20);
    else await removeIfSame(mutex, holder.ino); // its holder died mid-takeover
    return;
  }
  takingOver.add(dir);
  try {
    const current = await readLock(path);
    if (current !== 'missing' && current.ino === staleIno) await fs.unlink(path);
  } finally {
    takingOver.delete(dir);
    await fs.unlink(mutex);
  }
}

/** Directories this process is taking over a stale lock of (so its own LOCK.takeover reads as live). */
const takingOver = new Set<string>();

/**
 * Removes the file at `path` if it is still the one with inode `ino`: moved aside under a unique name first
 * (only one of several removers can move it), and put back with link() if it turns out to be a newer file.
 */
async function removeIfSame(path: string, ino: number): Promise<void> {
  const aside = `${path}.stale-${process.pid}-${randomBytes(4).toString('hex')}`;
  try {
    await fs.rename(path, aside);
  } catch (e) {
    if (errno(e) === 'ENOENT') return;
    throw e;
  }
  const moved = await fs.stat(aside).catch(() => undefined);
  if (moved !== undefined && moved.ino !== ino) await fs.link(aside, path).catch(() => undefined);
  await fs.unlink(aside).catch(() => undefined);
}

async function releaseStoreLock(dir: string, mine: LockRecord): Promise<void> {
  heldByThisProcess.delete(dir);
  const path = join(dir, LOCK_FILE);
  const seen = await readLock(path);
  if (seen !== 'missing' && seen.rec !== 'unreadable' && seen.rec.pid === mine.pid && seen.rec.acquiredAt === mine.acquiredAt) {
    await fs.unlink(path);
    await fsyncDir(dir);
  }
}

interface SeenLock {
  rec: LockRecord | 'unreadable';
  /** Identity of the file read, so a takeover can tell it from a newer lock at the same path. */
  ino: number;
  mtimeMs: number;
}

async function readLock(path: string): Promise<SeenLock | 'missing'> {
  let fh: FileHandle;
  try {
    fh = await fs.open(path, 'r');
  } catch (e) {
    if (errno(e) === 'ENOENT') return 'missing';
    throw e;
  }
  try {
    const { ino, mtimeMs } = await fh.stat();
    return { rec: parseLock(await fh.readFile('utf8')), ino, mtimeMs };
  } finally {
    await fh.close();
  }
}

function parseLock(text: string): LockRecord | 'unreadable' {
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

const sleep = (ms: number) => new Promise<void>((r) => setTimeout(r, ms));
export const errno = (e: unknown): string | undefined => (e as NodeJS.ErrnoException | undefined)?.code;
