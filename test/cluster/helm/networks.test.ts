/**
 * The chart's `chains.<chain>.network`: the shipped testnet file (networks/, linked into the chart) merged under the
 * operator's values, rendered into the config file the service loads. Renders only: no API server needed.
 */
import { mkdtempSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { stringify } from 'yaml';
import { loadClusterConfig, workerChainConfig } from '../../../src/roles/cluster/config.ts';
import { readNetworkFile } from '../../../src/roles/networks.ts';
import { componentName, parseManifests, renderChart, valuesFile } from './chart.ts';

const operator = {
  rpcUrl: 'https://base-sepolia.example.internal',
  paymaster: '0x1111111111111111111111111111111111111111',
  beneficiary: '0x2222222222222222222222222222222222222222',
  treasury: '0x3333333333333333333333333333333333333333',
  keys: { existingSecret: 'agent-wallet-base-keys' },
};

async function renderedConfig(chains: Record<string, unknown>) {
  const dir = mkdtempSync(join(tmpdir(), 'aw-chart-network-'));
  writeFileSync(join(dir, 'values.yaml'), stringify({ chains }));
  const text = await renderChart({ namespace: 'aw', release: 'aw', values: [valuesFile('minimal'), join(dir, 'values.yaml')] });
  const cm = parseManifests(text).find((m) => m.kind === 'ConfigMap' && m.metadata.name === componentName('aw', 'config')) as unknown as { data: Record<string, string> };
  const path = join(dir, 'config.yaml');
  writeFileSync(path, cm.data['config.yaml']!);
  return loadClusterConfig(path);
}

describe('chart value chains.<chain>.network', () => {
  it("merges the shipped file under the operator's values: theirs win, the file fills what they left empty", async () => {
    const config = await renderedConfig({ base: { enabled: true, network: 'base-sepolia', ...operator, confirmations: 60, bundler: { maxOpsPerBundle: 8 } } });
    const base = config.chains.find((c) => c.name === 'base')!;
    const shipped = readNetworkFile('base-sepolia') as { tokens: unknown; paymentConfirmations: number; bundler: Record<string, unknown>; protocols: unknown };
    expect(base.tokens).toEqual((shipped.tokens as object[]).map((t) => ({ acceptedForPayment: true, ...t })));
    expect(base.confirmations).toBe(60); // the operator's
    expect(base.paymentConfirmations).toBe(shipped.paymentConfirmations); // the file's
    expect(base.bundler).toMatchObject({ ...shipped.bundler, maxOpsPerBundle: 8 });
    expect(base.protocols).toEqual(shipped.protocols);
    expect(base.paymaster).toBe(operator.paymaster);
    // With the keys from its Secret, the worker's configuration is complete.
    expect(workerChainConfig(base, { AGENT_WALLET_PAYMASTER_SIGNER_KEY: `0x${'11'.repeat(32)}`, AGENT_WALLET_EXECUTOR_KEYS: `0x${'22'.repeat(32)}` }).chainId).toBe(84532);
  });

  it('without it, nothing of the file is added', async () => {
    const config = await renderedConfig({ base: { enabled: true, ...operator } });
    expect(config.chains.find((c) => c.name === 'base')!.tokens).toEqual([]);
  });

  it("refuses another chain's network", async () => {
    await expect(renderedConfig({ ethereum: { enabled: true, network: 'base-sepolia', ...operator } })).rejects.toThrow(/network/);
  });
});

