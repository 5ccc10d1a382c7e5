/**
 * GMX's SDK (@gmx-io/sdk), pinned and unpacked but never installed: as a dependency it adds 307 packages and
 * 345 MB to node_modules (it depends on typescript, graphql and the Gelato relay SDK), and the project needs only
 * its ABIs and address tables (scripts/build-gmx-abis.ts) and, in tests, its position and fee utilities as the
 * oracle the client's arithmetic is compared with. Its CommonJS build needs nothing but viem from there, so it is
 * unpacked inside the project's node_modules/.cache, where `require('viem')` resolves to the project's viem.
 */
import { existsSync, rmSync, writeFileSync } from 'node:fs';
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

/** The unpacked package's directory (`…/package`), unpacking it first when it is not there yet. */
export function gmxSdkDir(): string {
  const dir = join(root, 'node_modules/.cache/agent-wallet', `gmx-sdk-${GMX_SDK.version}`);
  const done = join(dir, '.unpacked');
  if (!existsSync(done)) {
    rmSync(dir, { recursive: true, force: true });
    extractPackage(GMX_SDK, dir);
    writeFileSync(done, `${GMX_SDK.integrity}\n`);
  }
  return join(dir, 'package');
}

/** `require` of one of the SDK's CommonJS files, by its path in the package (e.g. `build/cjs/src/utils/positions.js`). */
export function requireGmxSdk<T = Record<string, unknown>>(file: string): T {
  const dir = gmxSdkDir();
  return createRequire(join(dir, 'package.json'))(join(dir, file)) as T;
}
