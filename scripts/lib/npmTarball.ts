/**
 * A package pinned by name, version and the registry's sha512 integrity, fetched as its tarball with `npm pack`
 * into ~/.cache/agent-wallet/npm-tarballs and never installed: how the build scripts read compiled artifacts and
 * ABIs, and how tests load a test oracle, without adding the package's dependency tree to node_modules.
 */
import { execFileSync } from 'node:child_process';
import { createHash } from 'node:crypto';
import { existsSync, mkdirSync, readFileSync, rmSync } from 'node:fs';
import { homedir } from 'node:os';
import { join } from 'node:path';

export const TARBALL_CACHE = join(homedir(), '.cache/agent-wallet/npm-tarballs');

export interface Pinned {
  name: string;
  version: string;
  /** The registry's `dist.integrity` (`npm view <name>@<version> dist.integrity`). */
  integrity: string;
}

const sriOf = (bytes: Buffer) => `sha512-${createHash('sha512').update(bytes).digest('base64')}`;
const tarballPath = (p: Pinned) => join(TARBALL_CACHE, `${p.name.replace(/^@/, '').replace('/', '-')}-${p.version}.tgz`);

/** The package's tarball, from the cache when its integrity matches, else fetched with `npm pack` and checked. */
export function tarball(p: Pinned): { path: string; fetched: boolean } {
  const path = tarballPath(p);
  if (existsSync(path) && sriOf(readFileSync(path)) === p.integrity) return { path, fetched: false };
  mkdirSync(TARBALL_CACHE, { recursive: true });
  rmSync(path, { force: true });
  // From the cache directory: npm pack writes a file and touches no project (nor its node_modules).
  execFileSync('npm', ['pack', `${p.name}@${p.version}`, '--pack-destination', TARBALL_CACHE, '--silent'], { cwd: TARBALL_CACHE, stdio: ['ignore', 'ignore', 'inherit'] });
  const got = sriOf(readFileSync(path));
  if (got !== p.integrity) {
    rmSync(path, { force: true });
    throw new Error(`${p.name}@${p.version}: the tarball's integrity is ${got}, pinned ${p.integrity}`);
  }
  return { path, fetched: true };
}

/**
 * Extracts `files` (paths inside the package; all of it when omitted) of `p` into `dir` (as `dir/package/...`)
 * and checks the tarball's own package.json names the pinned version.
 */
export function extractPackage(p: Pinned, dir: string, files?: readonly string[]): { fetched: boolean; path: string } {
  const t = tarball(p);
  mkdirSync(dir, { recursive: true });
  execFileSync('tar', ['-xzf', t.path, '-C', dir, ...(files ?? []).map((f) => `package/${f}`)], { stdio: ['ignore', 'ignore', 'inherit'] });
  const version = (JSON.parse(execFileSync('tar', ['-xzOf', t.path, 'package/package.json']).toString()) as { version: string }).version;
  if (version !== p.version) throw new Error(`${p.name}: the tarball says version ${version}, pinned ${p.version}`);
  return t;
}
