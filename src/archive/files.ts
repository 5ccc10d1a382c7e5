import { createHash, randomBytes } from 'node:crypto';
import { promises as fs } from 'node:fs';
import type { FileHandle } from 'node:fs/promises';
import { dirname, join, resolve } from 'node:path';
import { fsyncDir } from '../lib/fs.ts';
import { ensurePrivateTree, mkdirPrivate, openPrivateFile } from '../lib/privateFs.ts';
import { parseArchived, parseInclusionMark } from './codec.ts';
import { ArchiveError, DEFAULT_ARCHIVE_RETENTION_MS, DEFAULT_NAMESPACE, validArchiveName, type ExecutionArchive } from './types.ts';

export interface FileArchiveOptions {
  /** The directory the archive owns, e.g. `<dataDir>/archive` (created if missing). */
  dir: string;
  /** How long an archived request stays readable, from when it was archived (default 30 days). */
  retentionMs?: number;
  /** fsync each file and its directory before put resolves (default true). Off only for throwaway archives. */
  fsync?: boolean;
  /** How often expired files are removed (default hourly; 0 = only when sweep() is called). */
  sweepIntervalMs?: number;
}

export interface FileArchive extends ExecutionArchive {
  readonly dir: string;
  /** Removes expired entries and temp files left by a crash. */
  sweep(): Promise<{ removed: number }>;
}

/** A temp file older than this was left by a crash mid-put. */
const STALE_TEMP_MS = 3_600_000;
/** File names stay under the usual 255-byte limit; longer object names (up to 253) are hashed. */
const MAX_PLAIN_NAME = 200;

/**
 * The embedded mode's archive: one JSON file per request at `<dir>/<namespace>/<shard>/<name>.json`, where
 * the shard is the first byte of sha256(namespace/name) in hex, so no directory grows past a few thousand
 * entries. A put writes a temp file, fsyncs it, renames it into place and fsyncs the directory: once it
 * resolves the entry survives a crash or power loss, and a reader never sees half a file. Nothing is held in
 * memory. Names longer than 200 characters are stored as `_<sha256 of name>.json` (`_` cannot start a name).
 * The directories are 0700 and the files 0600 whatever the umask (an older version's looser tree is tightened
 * at open): the requests are the API clients' business only. Each chain's inclusion mark is
 * `<dir>/<namespace>/_inclusion/<chain>.json`, written the same way (and expiring the same way).
 *
 * @example
 * const archive = await openFileArchive({ dir: join(dataDir, 'archive') });
 */
export async function openFileArchive(opts: FileArchiveOptions): Promise<FileArchive> {
  const root = resolve(opts.dir);
  const retentionMs = opts.retentionMs ?? DEFAULT_ARCHIVE_RETENTION_MS;
  if (!(retentionMs > 0)) throw new RangeError(`archive retention must be positive, got ${opts.retentionMs}`);
  const durable = opts.fsync ?? true;
  await ensurePrivateTree(root);

  const pathOf = (namespace: string, name: string): string => {
    const shard = createHash('sha256').update(`${namespace}/${name}`).digest('hex').slice(0, 2);
    const file = name.length <= MAX_PLAIN_NAME ? `${name}.json` : `_${createHash('sha256').update(name).digest('hex')}.json`;
    return join(root, namespace, shard, file);
  };
  const expired = (mtimeMs: number, now = Date.now()) => now - mtimeMs > retentionMs;

  const markPathOf = (namespace: string, chain: string): string => join(root, namespace, '_inclusion', `${chain}.json`);

  /** Writes `text` at `path`: a temp file, fsynced, renamed into place, the directory fsynced (and new parents). */
  async function writeDurably(path: string, text: string): Promise<void> {
    const dir = dirname(path);
    const created = await mkdirPrivate(dir);
    const temp = join(dir, `.${randomBytes(8).toString('hex')}.tmp`);
    const fh = await openPrivateFile(temp, 'wx'); // a fresh random name; renamed into place with its mode
    try {
      await fh.writeFile(text);
      if (durable) await fh.sync();
    } catch (e) {
      await fh.close();
      await fs.rm(temp, { force: true });
      throw e;
    }
    await fh.close();
    await fs.rename(temp, path);
    if (!durable) return;
    await fsyncDir(dir);
    // Directories this put created must be durable entries of their parents too.
    if (created !== undefined) {
      for (let d = dirname(dir); ; d = dirname(d)) {
        await fsyncDir(d);
        if (d === dirname(created)) break;
      }
    }
  }

  /** The file's text, or undefined when it does not exist or has expired (the sweep removes it). */
  async function readFresh(path: string): Promise<string | undefined> {
    let fh: FileHandle;
    try {
      fh = await fs.open(path, 'r');
    } catch (e) {
      if ((e as NodeJS.ErrnoException).code === 'ENOENT') return undefined;
      throw e;
    }
    try {
      const st = await fh.stat();
      if (expired(st.mtimeMs)) return undefined;
      return await fh.readFile('utf8');
    } finally {
      await fh.close();
    }
  }

  async function sweep(): Promise<{ removed: number }> {
    let removed = 0;
    const now = Date.now();
    for (const ns of await readdirOrEmpty(root)) {
      for (const shard of await readdirOrEmpty(join(root, ns))) {
        const shardDir = join(root, ns, shard);
        for (const file of await readdirOrEmpty(shardDir)) {
          const path = join(shardDir, file);
          const st = await fs.stat(path).catch(() => undefined);
          if (!st?.isFile()) continue;
          const stale = file.endsWith('.tmp') ? now - st.mtimeMs > STALE_TEMP_MS : expired(st.mtimeMs, now);
          if (stale && (await fs.rm(path, { force: true }).then(() => true, () => false))) removed++;
        }
      }
    }
    return { removed };
  }

  let sweeping: Promise<unknown> | undefined;
  const interval = opts.sweepIntervalMs ?? 3_600_000;
  const timer =
    interval > 0
      ? setInterval(() => {
          sweeping ??= sweep()
            .catch(() => undefined)
            .finally(() => (sweeping = undefined));
        }, interval)
      : undefined;
  timer?.unref();

  return {
    dir: root,

    async put(req) {
      const { name, namespace } = req.metadata;
      if (!validArchiveName(name, namespace)) {
        throw new ArchiveError('Invalid', `cannot archive ${namespace}/${name}: not a valid object name`);
      }
      await writeDurably(pathOf(namespace, name), JSON.stringify(req));
    },

    async putInclusionMark(mark, namespace = DEFAULT_NAMESPACE) {
      if (!validArchiveName('mark', namespace)) throw new ArchiveError('Invalid', `cannot archive a mark in ${namespace}: not a valid namespace`);
      await writeDurably(markPathOf(namespace, mark.chain), JSON.stringify(mark));
    },

    async inclusionMark(chain, namespace = DEFAULT_NAMESPACE) {
      if (!validArchiveName('mark', namespace)) return undefined;
      const text = await readFresh(markPathOf(namespace, chain));
      return text === undefined ? undefined : parseInclusionMark(text, `${namespace}/${chain}`);
    },

    async get(name, namespace = DEFAULT_NAMESPACE) {
      if (!validArchiveName(name, namespace)) return undefined;
      const text = await readFresh(pathOf(namespace, name));
      return text === undefined ? undefined : parseArchived(text, `${namespace}/${name}`);
    },

    sweep,

    async close() {
      if (timer) clearInterval(timer);
      await sweeping;
    },
  };
}

async function readdirOrEmpty(dir: string): Promise<string[]> {
  try {
    return await fs.readdir(dir);
  } catch (e) {
    if ((e as NodeJS.ErrnoException).code === 'ENOENT' || (e as NodeJS.ErrnoException).code === 'ENOTDIR') return [];
    throw e;
  }
}
