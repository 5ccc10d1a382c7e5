import { spawn } from 'node:child_process';
import { mkdtempSync, readFileSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join, resolve } from 'node:path';
import { expect, onTestFinished, test } from 'vitest';
import { parse as parseYaml } from 'yaml';
import { GmxV2ConfigSchema } from './config.ts';
import testnet from './testnet.generated.json' with { type: 'json' };

const repoRoot = resolve(import.meta.dirname, '../../..');

test('the committed ABIs and Arbitrum Sepolia addresses are what scripts/build-gmx-abis.ts extracts from the pinned SDK', async () => {
  const out = mkdtempSync(join(tmpdir(), 'gmx-abis-'));
  onTestFinished(() => rmSync(out, { recursive: true, force: true }));
  await new Promise<void>((done, fail) => {
    const child = spawn(process.execPath, ['bin/run-ts.js', 'scripts/build-gmx-abis.ts', '--out', out], { cwd: repoRoot, stdio: ['ignore', 'pipe', 'pipe'] });
    let text = '';
    child.stdout.on('data', (c: Buffer) => (text += c.toString()));
    child.stderr.on('data', (c: Buffer) => (text += c.toString()));
    child.once('error', fail);
    child.once('exit', (code) => (code === 0 ? done() : fail(new Error(`build-gmx-abis exited ${code}: ${text}`))));
  });
  for (const file of ['abis.generated.ts', 'testnet.generated.json']) {
    expect(readFileSync(join(out, file), 'utf8'), file).toBe(readFileSync(join(import.meta.dirname, file), 'utf8'));
  }
});

test("the chart ships the SDK's Arbitrum Sepolia deployment, valid for the family's config", () => {
  const values = parseYaml(readFileSync(join(repoRoot, 'charts/agent-wallet/values.yaml'), 'utf8')) as { chains: Record<string, { protocols: { gmxV2: Record<string, unknown> } }> };
  const shipped = GmxV2ConfigSchema.parse(values.chains.arbitrum!.protocols.gmxV2);
  const c = testnet.contracts;
  expect(shipped).toEqual({
    dataStore: c.DataStore,
    exchangeRouter: c.ExchangeRouter,
    reader: c.SyntheticsReader,
    router: c.SyntheticsRouter,
    orderVault: c.OrderVault,
    depositVault: c.DepositVault,
    withdrawalVault: c.WithdrawalVault,
    eventEmitter: c.EventEmitter,
    referralStorage: c.ReferralStorage,
    wnt: c.NATIVE_TOKEN,
    oracleUrl: testnet.oracleKeeperUrl,
    executionFeeBufferBps: 3000,
  });
});
