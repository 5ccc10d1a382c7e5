import { randomBytes } from 'node:crypto';
import { mkdtempSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import type { ChainName } from '../../src/config/chains.ts';
import { devnetChain, devnetPublicClient, devnetWalletClient } from '../../src/devnet/clients.ts';
import { chainConfigsFromManifest, loadManifest } from '../../src/devnet/devnet.ts';
import type { DevnetChain, DevnetManifest } from '../../src/devnet/manifest.ts';
import { MANIFEST_ENV } from '../globalSetup.ts';

/** The run's shared devnet (started by test/globalSetup.ts), with typed clients per chain. */
export function testDevnet() {
  const path = process.env[MANIFEST_ENV];
  if (!path) throw new Error(`${MANIFEST_ENV} is not set: run the tests through vitest (globalSetup starts the devnet)`);
  return devnetClients(loadManifest(path), path);
}

/** Typed clients per chain of a devnet's manifest: the shared one's, or a test's own devnet's. */
export function devnetClients(manifest: DevnetManifest, path: string) {
  const chain = (name: ChainName): DevnetChain => {
    const c = manifest.chains.find((x) => x.name === name);
    if (!c) throw new Error(`devnet has no chain ${name}`);
    return c;
  };
  const publicClient = (name: ChainName) => devnetPublicClient(devnetChain(chain(name)));
  const walletClient = (name: ChainName, i = 0) => devnetWalletClient(devnetChain(chain(name)), manifest.accounts.funded[i]!.privateKey);
  return { manifest, manifestPath: path, chain, chainConfigs: () => chainConfigsFromManifest(manifest), publicClient, walletClient };
}

export const tempDir = (prefix = 'aw-test-'): string => mkdtempSync(join(tmpdir(), prefix));
export const newServiceSecret = (): string => randomBytes(32).toString('hex');
