import { promises as fs } from 'node:fs';
import type { FileHandle } from 'node:fs/promises';
import { join } from 'node:path';

/**
 * Files and directories only the service's user may reach: the embedded data directory holds the service
 * secret, the API keys' hashes, webhook secrets and an admin socket that manages keys without other
 * authentication. A mode passed to open or mkdir is only ever narrowed by the umask, so creating with these
 * is private whatever the umask; but neither changes the mode of an entry that already exists (left by an
 * older version, or written under another umask), so those are tightened with chmod.
 */
export const PRIVATE_FILE_MODE = 0o600;
export const PRIVATE_DIR_MODE = 0o700;

/** Creates `dir` and its missing parents 0700; an existing `dir` keeps its mode. Returns what fs.mkdir does. */
export function mkdirPrivate(dir: string): Promise<string | undefined> {
  return fs.mkdir(dir, { recursive: true, mode: PRIVATE_DIR_MODE });
}

/** Creates `dir` (and missing parents) 0700, or makes an existing one 0700. Its contents are left alone. */
export async function ensurePrivateDir(dir: string): Promise<void> {
  if ((await mkdirPrivate(dir)) === undefined) await fs.chmod(dir, PRIVATE_DIR_MODE);
}

/**
 * Creates `dir` 0700, or makes an existing one and everything under it private: directories 0700, files and
 * sockets 0600 (symbolic links are left alone: chmod would follow them). A `dir` already 0700 is not walked:
 * this code creates nothing looser under it, so only a tree an older version left needs the walk, once. The
 * walk tightens `dir` itself last, so a start that dies midway walks again the next time.
 */
export async function ensurePrivateTree(dir: string): Promise<void> {
  if ((await mkdirPrivate(dir)) !== undefined) return;
  if (((await fs.stat(dir)).mode & 0o777) === PRIVATE_DIR_MODE) return;
  await tightenContents(dir);
  await fs.chmod(dir, PRIVATE_DIR_MODE);
}

async function tightenContents(dir: string): Promise<void> {
  for (const entry of await fs.readdir(dir, { withFileTypes: true })) {
    const path = join(dir, entry.name);
    if (entry.isDirectory()) await tightenContents(path);
    if (entry.isSymbolicLink()) continue;
    await fs.chmod(path, entry.isDirectory() ? PRIVATE_DIR_MODE : PRIVATE_FILE_MODE).catch((e: NodeJS.ErrnoException) => {
      if (e.code !== 'ENOENT') throw e; // removed meanwhile: nothing to tighten
    });
  }
}

/**
 * Opens a file for writing, created 0600. Unless the open is exclusive (`wx`: the file is new), an existing
 * file is made 0600 through the handle before anything is written to it.
 */
export async function openPrivateFile(path: string, flags: 'a' | 'w' | 'wx' | 'r+'): Promise<FileHandle> {
  const fh = await fs.open(path, flags, PRIVATE_FILE_MODE);
  if (flags === 'wx') return fh;
  try {
    await fh.chmod(PRIVATE_FILE_MODE);
  } catch (e) {
    await fh.close().catch(() => undefined);
    throw e;
  }
  return fh;
}

/** Writes (creates or replaces the contents of) a private file. */
export async function writePrivateFile(path: string, data: string, flags: 'w' | 'wx' = 'w'): Promise<void> {
  const fh = await openPrivateFile(path, flags);
  try {
    await fh.writeFile(data, 'utf8');
  } finally {
    await fh.close();
  }
}

/** Reads a private file, first making it 0600 if it is not (an older version may have left it looser); undefined if absent. */
export async function readPrivateFile(path: string): Promise<string | undefined> {
  let fh: FileHandle;
  try {
    fh = await fs.open(path, 'r');
  } catch (e) {
    if ((e as NodeJS.ErrnoException).code === 'ENOENT') return undefined;
    throw e;
  }
  try {
    if (((await fh.stat()).mode & 0o777) !== PRIVATE_FILE_MODE) await fh.chmod(PRIVATE_FILE_MODE);
    return await fh.readFile('utf8');
  } finally {
    await fh.close();
  }
}
