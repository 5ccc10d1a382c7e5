/**
 * GMX's SDK (@gmx-io/sdk), pinned and unpacked but never installed: as a dependency it adds 307 packages and
 * 345 MB to node_modules (it depends on typescript, graphql and the Gelato relay SDK), and the project needs only
 * its ABIs and address tables (scripts/build-gmx-abis.ts) and, in tests, its position and fee utilities as the
 * oracle the client's arithmetic is compared with. Its CommonJS build needs nothing but viem from there, so it is
 * unpacked inside the project's node_modules/.cache, where `require('viem')` resolves to the project's viem.
 */
import { existsSync, mkdirSync, mkdtempSync, renameSync, rmSync } from 'node:fs';
import { createRequire } from 'node:module';
import { dirname, join, resolve } from 'node:path';
import { fileURLToPath } from 'node:url';
import { extractPackage, type Pinned } from './npmTarball.ts';

export const GMX_SDK: Pinned = {
  name: '@gmx-io/sdk',
  version: '1.4.0',
  integrity: 'sha512-Cv9xCeYViYx2tUttEYRrDST4qu6+who4+ovSGlHdDPYuRWO3/j3rY/6JmakVPwEiWyIrkXPoWaeUD8FhpsQdvw==',
};

const root = resolve(dirname(fileURLToPath(import.meta.url)), '../..');

/**
 * The unpacked package's directory (`…/package`), unpacking it first when it is not there yet. Test files in
 * parallel processes may ask at once: each unpacks into a directory of its own and renames it into place (atomic);
 * a process that finds the place taken uses what is there.
 */
export function gmxSdkDir(): string {
  const cache = join(root, 'node_modules/.cache/agent-wallet');
  const dir = join(cache, `gmx-sdk-${GMX_SDK.version}-${GMX_SDK.integrity.slice(7, 19).replace(/[/+]/g, '_')}`);
  if (!existsSync(dir)) {
    mkdirSync(cache, { recursive: true });
    const work = mkdtempSync(join(cache, 'gmx-sdk-unpacking-'));
    try {
      extractPackage(GMX_SDK, work);
      try {
        renameSync(work, dir);
      } catch (e) {
        if (!existsSync(dir)) throw e; // another process put it there first: use theirs
      }
    } finally {
      rmSync(work, { recursive: true, force: true });
    }
  }
  return join(dir, 'package');
}

/** `require` of one of the SDK's CommonJS files, by its path in the package (e.g. `build/cjs/src/utils/positions.js`). */
export function requireGmxSdk<T = Record<string, unknown>>(file: string): T {
  const dir = gmxSdkDir();
  return createRequire(join(dir, 'package.json'))(join(dir, file)) as T;
}
