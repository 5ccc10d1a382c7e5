import { chmodSync, lstatSync, mkdirSync, readdirSync } from 'node:fs';
import { join } from 'node:path';

/**
 * The devnet's directory holds every devnet private key (manifest.json) and the chains' state and journals:
 * owner only, whatever the umask. A mode given at creation is still narrowed by the umask, never widened, so
 * files created with PRIVATE_FILE_MODE are at most 0600.
 */
export const PRIVATE_FILE_MODE = 0o600;
export const PRIVATE_DIR_MODE = 0o700;

/**
 * Creates `dir` if needed and makes it and everything under it owner-only: directories 0700, files 0600.
 * Files written by earlier versions (or under a permissive umask) were world-readable. Symlinks are left alone.
 */
export function ensurePrivateDir(dir: string): void {
  mkdirSync(dir, { recursive: true, mode: PRIVATE_DIR_MODE });
  tighten(dir);
}

function tighten(path: string): void {
  const stat = lstatSync(path);
  if (stat.isDirectory()) {
    if ((stat.mode & 0o777) !== PRIVATE_DIR_MODE) chmodSync(path, PRIVATE_DIR_MODE);
    for (const entry of readdirSync(path)) tighten(join(path, entry));
  } else if (stat.isFile() && (stat.mode & 0o777) !== PRIVATE_FILE_MODE) {
    chmodSync(path, PRIVATE_FILE_MODE);
  }
}
