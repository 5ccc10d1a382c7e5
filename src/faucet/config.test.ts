import { writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { tempDir, testDevnet } from '../../test/support/env.ts';
import { DEFAULT_LIMITS, DEVNET_FAUCET_ACCOUNT, faucetSettingsFromConfig, faucetSettingsFromManifest, loadFaucetConfig } from './config.ts';

const KEY = `0x${'ab'.repeat(32)}`;
const TOKEN = '0x29B17ce942a830A88bC34F09FDC8C45479644479';
const TREASURY = '0x14dC79964da2C08b23698B3D3cc7Ca32193d9955';

function writeConfig(yaml: string): string {
  const path = join(tempDir('aw-faucet-config-'), 'faucet.yaml');
  writeFileSync(path, yaml);
  return path;
}

describe('faucet configuration', () => {
  it('a deployment: the YAML with its defaults, the key and a chain’s RPC URL from the environment', async () => {
    const config = await loadFaucetConfig(
      writeConfig(
        [
          'amount: "2.5"',
          'limits: { perAddress: { burst: 1, everySeconds: 86400 } }',
          'chains:',
          `  - { name: base, chainId: 84532, token: { address: "${TOKEN}" }, explorerUrl: "https://sepolia.basescan.org/" }`,
          `  - { name: arbitrum, chainId: 421614, rpcUrl: "https://arb.example/rpc", token: { address: "${TOKEN}", decimals: 18 } }`,
          `serviceAccounts: ["${TREASURY}"]`,
        ].join('\n'),
      ),
    );
    expect(config).toMatchObject({ port: 8090, host: '0.0.0.0', trustProxy: false, receiptTimeoutSeconds: 60 });
    const settings = faucetSettingsFromConfig(config, { AGENT_WALLET_FAUCET_KEY: KEY, AGENT_WALLET_FAUCET_RPC_URL_BASE: 'https://base.example/rpc?key=secret' });
    expect(settings.privateKey).toBe(KEY);
    expect(settings.limits).toEqual({ perAddress: { burst: 1, everySeconds: 86_400 }, perClient: DEFAULT_LIMITS.perClient });
    expect(settings.receiptTimeoutMs).toBe(60_000);
    expect(settings.serviceAccounts).toEqual([TREASURY]);
    expect(settings.chains).toEqual([
      {
        name: 'base',
        chainId: 84532,
        rpcUrl: 'https://base.example/rpc?key=secret',
        token: { address: TOKEN, decimals: 6 },
        amountRaw: 2_500_000n,
        explorerUrl: 'https://sepolia.basescan.org',
      },
      { name: 'arbitrum', chainId: 421614, rpcUrl: 'https://arb.example/rpc', token: { address: TOKEN, decimals: 18 }, amountRaw: 2_500_000_000_000_000_000n, explorerUrl: undefined },
    ]);
  });

  it('refuses what would fail later: no key, no RPC URL, more decimals than the token, a chain twice, bad fields', async () => {
    const base = `{ name: base, chainId: 84532, rpcUrl: "http://127.0.0.1:1", token: { address: "${TOKEN}" } }`;
    const config = await loadFaucetConfig(writeConfig(`chains: [${base}]\n`));
    expect(() => faucetSettingsFromConfig(config, {})).toThrow(/AGENT_WALLET_FAUCET_KEY must hold/);
    expect(() => faucetSettingsFromConfig(config, { AGENT_WALLET_FAUCET_KEY: '0x1234' })).toThrow(/AGENT_WALLET_FAUCET_KEY must hold/);

    const noRpc = await loadFaucetConfig(writeConfig(`chains: [{ name: base, chainId: 84532, token: { address: "${TOKEN}" } }]\n`));
    expect(() => faucetSettingsFromConfig(noRpc, { AGENT_WALLET_FAUCET_KEY: KEY })).toThrow(/chain base: no RPC URL: set rpcUrl or AGENT_WALLET_FAUCET_RPC_URL_BASE/);

    const tooPrecise = await loadFaucetConfig(writeConfig(`amount: "0.0000001"\nchains: [${base}]\n`));
    expect(() => faucetSettingsFromConfig(tooPrecise, { AGENT_WALLET_FAUCET_KEY: KEY })).toThrow(/more decimals than base's token \(6\)/);

    const twice = await loadFaucetConfig(writeConfig(`chains: [${base}, ${base}]\n`));
    expect(() => faucetSettingsFromConfig(twice, { AGENT_WALLET_FAUCET_KEY: KEY })).toThrow(/a chain is listed twice/);

    await expect(loadFaucetConfig(writeConfig(`amount: "0"\nchains: [${base}]\n`))).rejects.toThrow(/must be more than 0\n.*at amount/);
    await expect(loadFaucetConfig(writeConfig(`chains: [{ name: polygon, chainId: 137, token: { address: "${TOKEN}" } }]\n`))).rejects.toThrow(
      /invalid faucet config .*chains\[0\]\.name/s,
    );
    await expect(loadFaucetConfig(writeConfig('chains: []\n'))).rejects.toThrow(/invalid faucet config/);
    await expect(loadFaucetConfig(writeConfig(`serviceAccounts: ["0x12"]\nchains: [${base}]\n`))).rejects.toThrow(/invalid faucet config .*serviceAccounts\[0\]/s);
    await expect(loadFaucetConfig('/nonexistent/faucet.yaml')).rejects.toThrow(/cannot read faucet config/);
  });

  it('the devnet: every chain of the manifest, its aUSD, its own faucet account (funded[4] in older manifests)', () => {
    const { manifest } = testDevnet();
    const settings = faucetSettingsFromManifest(manifest);
    expect(settings.privateKey).toBe((manifest.accounts.faucet ?? manifest.accounts.funded[DEVNET_FAUCET_ACCOUNT])!.privateKey);
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
