import { spawn } from 'node:child_process';
import { mkdtempSync, readdirSync, readFileSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join, resolve } from 'node:path';
import { expect, onTestFinished, test } from 'vitest';
import { parse as parseYaml } from 'yaml';
import { UNISWAP_ARTIFACTS, V3_POOL_INIT_CODE_HASH } from './artifacts.ts';
import testnets from './testnet-addresses.json' with { type: 'json' };

const repoRoot = resolve(import.meta.dirname, '../../../..');

test("the shipped chart's Uniswap addresses are the SDKs' (testnet-addresses.json), with no pools listed", () => {
  const values = parseYaml(readFileSync(join(repoRoot, 'charts/agent-wallet/values.yaml'), 'utf8')) as {
    chains: Record<string, { protocols: Record<string, Record<string, unknown>> }>;
  };
  expect(Object.keys(testnets.chains)).toEqual(['ethereum', 'base']);
  for (const [chain, addresses] of Object.entries(testnets.chains)) {
    const { uniswapV3, uniswapV4 } = values.chains[chain]!.protocols;
    expect(uniswapV3, chain).toEqual({ ...addresses.uniswapV3, pools: [] });
    // The config has no v4 PositionManager (the family does not add liquidity on v4); the JSON keeps it for reference.
    const { positionManager: _, ...v4 } = addresses.uniswapV4;
    expect(uniswapV4, chain).toEqual({ ...v4, pools: [] });
  }
  expect(testnets.chains.ethereum.uniswapV4.universalRouter).toBe('0x3A9D48AB9751398BbFa63ad67599Bb04e4BdF98b');
});

test("UniswapV3Pool's init code hash is the periphery's, and the UniversalRouter is 2.0.0's (RouterParameters without spokePool)", () => {
  expect(V3_POOL_INIT_CODE_HASH).toBe('0xe34f199b19b2b4f47f68442619d555527d244f78a3297ea89325f843f87b8b54');
  const ctor = UNISWAP_ARTIFACTS.universalRouter.abi.find((x) => x.type === 'constructor') as { inputs: { components: { name: string }[] }[] };
  expect(ctor.inputs[0]!.components.map((c) => c.name)).toEqual([
    'permit2',
    'weth9',
    'v2Factory',
    'v3Factory',
    'pairInitCodeHash',
    'poolInitCodeHash',
    'v4PoolManager',
    'v3NFTPositionManager',
    'v4PositionManager',
  ]);
});

test('the committed artifacts and addresses are what scripts/build-uniswap.ts extracts from the pinned tarballs', async () => {
  const out = mkdtempSync(join(tmpdir(), 'uniswap-artifacts-'));
  onTestFinished(() => rmSync(out, { recursive: true, force: true }));
  const output = await new Promise<string>((done, fail) => {
    const child = spawn(process.execPath, ['bin/run-ts.js', 'scripts/build-uniswap.ts', '--out', out], { cwd: repoRoot, stdio: ['ignore', 'pipe', 'pipe'] });
    let text = '';
    child.stdout.on('data', (c: Buffer) => (text += c.toString()));
    child.stderr.on('data', (c: Buffer) => (text += c.toString()));
    child.once('error', fail);
    child.once('exit', (code) => (code === 0 ? done(text) : fail(new Error(`build-uniswap exited ${code}: ${text}`))));
  });
  console.log(output.trim());
  const committed = import.meta.dirname;
  expect(readFileSync(join(out, 'testnet-addresses.json'), 'utf8')).toBe(readFileSync(join(committed, 'testnet-addresses.json'), 'utf8'));
  const names = readdirSync(join(committed, 'artifacts')).sort();
  expect(readdirSync(join(out, 'artifacts')).sort()).toEqual(names);
  expect(names).toHaveLength(14); // 12 contracts, Permit2, the v3 pool init code hash
  for (const name of names) expect(readFileSync(join(out, 'artifacts', name), 'utf8'), name).toBe(readFileSync(join(committed, 'artifacts', name), 'utf8'));
}, 180_000);
