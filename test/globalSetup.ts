/**
 * vitest globalSetup: one devnet for the whole test run, in a temporary data dir. Test files find it through
 * `process.env.AGENT_WALLET_TEST_MANIFEST` (set here before the workers start, so they inherit it) or
 * `inject('devnetManifestPath')`; read it with `loadManifest` from src/devnet/devnet.ts.
 */
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import type { TestProject } from 'vitest/node';
import { startDevnet, type Devnet } from '../src/devnet/devnet.ts';

declare module 'vitest' {
  export interface ProvidedContext {
    devnetManifestPath: string;
  }
}

export const MANIFEST_ENV = 'AGENT_WALLET_TEST_MANIFEST';

let devnet: Devnet | undefined;
let dataDir: string | undefined;

export async function setup(project: TestProject): Promise<void> {
  dataDir = mkdtempSync(join(tmpdir(), 'agent-wallet-test-'));
  devnet = await startDevnet({ dataDir, log: (line) => console.error(`[devnet] ${line}`) });
  process.env[MANIFEST_ENV] = devnet.manifestPath;
  // A `dev` a test starts says it runs here, not in the user's own directory (src/admin/running.ts).
  process.env.AGENT_WALLET_RUNTIME_DIR ??= join(dataDir, 'running');
  project.provide('devnetManifestPath', devnet.manifestPath);
}

export async function teardown(): Promise<void> {
  await devnet?.stop();
  devnet = undefined;
  if (dataDir) rmSync(dataDir, { recursive: true, force: true });
  dataDir = undefined;
}
