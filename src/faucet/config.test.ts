import { writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { tempDir, testDevnet } from '../../test/support/env.ts';
import { DEFAULT_LIMITS, DEVNET_FAUCET_ACCOUNT, faucetSettingsFromConfig, faucetSettingsFromManifest, loadFaucetConfig } from './config.ts';

const TOKEN = '0x29B17ce942a830A88bC34F09FDC8C45479644479';
const TREASURY = '0x14dC79964da2C08b23698B3D3cc7Ca32193d9955';

function writeConfig(yaml: string): string {
  const path = join(tempDir('aw-faucet-config-'), 'faucet.yaml');
  writeFileSync(path, yaml);
  return path;
}

describe('faucet configuration', () => {
  it('a deployment: the YAML with its defaults, each chain by its chain worker (no key, no RPC URL)', async () => {
    const config = await loadFaucetConfig(
      writeConfig(
        [
          'amount: "2.5"',
          'limits: { perAddress: { burst: 1, everySeconds: 86400 } }',
          'chains:',
          `  - { name: base, chainId: 84532, chainWorker: "chain-worker-base:50051", token: { address: "${TOKEN}" }, explorerUrl: "https://sepolia.basescan.org/" }`,
          `  - { name: arbitrum, chainId: 421614, chainWorker: "chain-worker-arbitrum:50051", token: { address: "${TOKEN}", decimals: 18 } }`,
          `serviceAccounts: ["${TREASURY}"]`,
        ].join('\n'),
      ),
    );
    expect(config).toMatchObject({ port: 8090, host: '0.0.0.0', trustProxy: false, receiptTimeoutSeconds: 60 });
    const settings = faucetSettingsFromConfig(config);
    expect(settings.limits).toEqual({ perAddress: { burst: 1, everySeconds: 86_400 }, perClient: DEFAULT_LIMITS.perClient });
    expect(settings.receiptTimeoutMs).toBe(60_000);
    expect(settings.serviceAccounts).toEqual([TREASURY]);
    expect(settings.chains).toEqual([
      {
        name: 'base',
        chainId: 84532,
        chainWorker: 'chain-worker-base:50051',
        token: { address: TOKEN, decimals: 6 },
        amountRaw: 2_500_000n,
        explorerUrl: 'https://sepolia.basescan.org',
      },
      { name: 'arbitrum', chainId: 421614, chainWorker: 'chain-worker-arbitrum:50051', token: { address: TOKEN, decimals: 18 }, amountRaw: 2_500_000_000_000_000_000n, explorerUrl: undefined },
    ]);
  });

  it('refuses what would fail later: no chain worker, an RPC URL or key of its own, more decimals than the token, a chain twice, bad fields', async () => {
    const base = `{ name: base, chainId: 84532, chainWorker: "127.0.0.1:1", token: { address: "${TOKEN}" } }`;
    // The faucet sends through the chain worker: a chain without one, or with the RPC URL of the old faucet, is refused.
    await expect(loadFaucetConfig(writeConfig(`chains: [{ name: base, chainId: 84532, token: { address: "${TOKEN}" } }]\n`))).rejects.toThrow(
      /invalid faucet config .*chains\[0\]\.chainWorker/s,
    );
    await expect(
      loadFaucetConfig(writeConfig(`chains: [{ name: base, chainId: 84532, chainWorker: "w:1", rpcUrl: "http://127.0.0.1:1", token: { address: "${TOKEN}" } }]\n`)),
    ).rejects.toThrow(/invalid faucet config .*rpcUrl/s);

    const tooPrecise = await loadFaucetConfig(writeConfig(`amount: "0.0000001"\nchains: [${base}]\n`));
    expect(() => faucetSettingsFromConfig(tooPrecise)).toThrow(/more decimals than base's token \(6\)/);

    const twice = await loadFaucetConfig(writeConfig(`chains: [${base}, ${base}]\n`));
    expect(() => faucetSettingsFromConfig(twice)).toThrow(/a chain is listed twice/);

    await expect(loadFaucetConfig(writeConfig(`amount: "0"\nchains: [${base}]\n`))).rejects.toThrow(/must be more than 0\n.*at amount/);
    await expect(loadFaucetConfig(writeConfig(`chains: [{ name: polygon, chainId: 137, token: { address: "${TOKEN}" } }]\n`))).rejects.toThrow(
      /invalid faucet config .*chains\[0\]\.name/s,
    );
    await expect(loadFaucetConfig(writeConfig('chains: []\n'))).rejects.toThrow(/invalid faucet config/);
    await expect(loadFaucetConfig(writeConfig(`serviceAccounts: ["0x12"]\nchains: [${base}]\n`))).rejects.toThrow(/invalid faucet config .*serviceAccounts\[0\]/s);
    await expect(loadFaucetConfig('/nonexistent/faucet.yaml')).rejects.toThrow(/cannot read faucet config/);
  });

  it('the devnet: every chain of the manifest and its aUSD; its chain workers hold its own faucet account (funded[4] in older manifests)', () => {
    const { manifest, chainConfigs } = testDevnet();
    const settings = faucetSettingsFromManifest(manifest);
    const faucetKey = (manifest.accounts.faucet ?? manifest.accounts.funded[DEVNET_FAUCET_ACCOUNT])!.privateKey;
    for (const c of chainConfigs()) expect(c).toMatchObject({ sendingAccounts: { faucetKey }, faucetCap: { tokens: { aUSD: '1000' } } });
    expect(settings.chains.map((c) => c.name)).toEqual(manifest.chains.map((c) => c.name));
    const { executors, paymasterSigner, settler, faucet } = manifest.accounts;
    expect([...settings.serviceAccounts].sort()).toEqual(
      [...manifest.chains.map((c) => c.treasury), ...executors.map((e) => e.address), paymasterSigner.address, settler!.address, faucet!.address].sort(),
    );
    for (const c of settings.chains) {
      const aUSD = manifest.chains.find((m) => m.name === c.name)!.tokens.find((t) => t.symbol === 'aUSD')!;
      expect(c).toMatchObject({ token: { address: aUSD.address, decimals: 6 }, amountRaw: 100_000_000n });
    }
  });
});
