/**
 * A leader change in the middle of an x402 settlement. The chain worker sends the settlement from the settler
 * account it owns; the leading controller, which asked for it and waits for its receipt, is killed with the
 * transaction in the mempool (base held with automine off). The next leader finishes the request: the payer's
 * authorization is spent once, the settler's nonces have no gap, and the request is confirmed.
 */
import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { parse as parseYaml } from 'yaml';
import { erc20Abi, parseAbiItem, type Address } from 'viem';
import { afterAll, beforeAll, expect, it } from 'vitest';
import { startTestCluster, type TestCluster } from '../support/cluster.ts';
import { runCli } from '../support/cli.ts';
import { tempDir } from '../support/env.ts';
import { newPayer } from '../support/payer.ts';
import { until } from '../support/until.ts';

const CHAIN = 'base';
let cluster: TestCluster;
let journal: string;
const rpc = (method: string, params: unknown[] = []) => cluster.devnet.publicClient(CHAIN).request({ method: method as never, params: params as never });

beforeAll(async () => {
  cluster = await startTestCluster({ x402: true });
  journal = join(tempDir('aw-cluster-x402-'), 'journal.jsonl');
});
afterAll(async () => {
  if (cluster) await rpc('evm_setAutomine', [true]).catch(() => undefined);
  await cluster?.stop();
});

it('the leading controller killed during an x402 settlement: one settlement, no nonce gap, the request confirmed', { timeout: 240_000 }, async () => {
  // The controller has no RPC URL: the configuration names none, only the chain workers' environment does. x402 is
  // verified, settled and looked up through the workers.
  const config = parseYaml(readFileSync(cluster.configPath, 'utf8')) as { x402: { enabled: boolean }; chains: Record<string, unknown>[] };
  expect(config.x402.enabled).toBe(true);
  for (const c of config.chains) expect(c).not.toHaveProperty('rpcUrl');

  const client = cluster.devnet.publicClient(CHAIN);
  const settler = cluster.devnet.manifest.accounts.settler!.address as Address;
  const usdc = cluster.devnet.chain(CHAIN).tokens.find((t) => t.symbol === 'USDC')!.address;
  const counter = cluster.devnet.chain(CHAIN).testContracts.counter;
  const { apiKey } = await cluster.newKey('manual');
  const env = { AGENT_WALLET_API_KEY: apiKey, AGENT_WALLET_BASE_URL: cluster.url, AGENT_WALLET_JOURNAL: journal };

  const quoted = await runCli(['execute', '--agent-id', 'x402-failover', '--chain', CHAIN, '--to', counter, '--data', '0xd09de08a'], env);
  expect(quoted.code, quoted.stderr).toBe(4); // the 402
  const payer = await newPayer(cluster.devnet, CHAIN);
  await payer.mint('USDC', payer.address, 10_000_000n);
  const usdcOf = () => client.readContract({ address: usdc, abi: erc20Abi, functionName: 'balanceOf', args: [payer.address] });
  const before = await usdcOf();
  const startBlock = await client.getBlockNumber();
  const settlerNonce = await client.getTransactionCount({ address: settler, blockTag: 'latest' });
  const leader = await until('a leader', () => cluster.leader());

  await rpc('evm_setAutomine', [false]);
  const paying = runCli(['pay', '--last', '--method', 'x402', '--wait', '--json'], { ...env, AGENT_WALLET_PAYER_KEY: payer.privateKey });
  // Signed by the worker, claimed by the leader, sent: in the mempool, the leader waiting for its receipt.
  await until('the settlement in the mempool', async () => ((await client.getTransactionCount({ address: settler, blockTag: 'pending' })) > settlerNonce ? true : undefined), 60_000);
  const killed = cluster.controllers.find((c) => c.name === leader)!;
  killed.child.kill('SIGKILL');
  await killed.exited;
  await rpc('evm_setAutomine', [true]);
  await rpc('evm_mine');

  const paid = await paying;
  expect(paid.code, `${paid.stdout}\n${paid.stderr}`).toBe(0);
  const lines = paid.stdout.trim().split('\n').map((l) => JSON.parse(l) as Record<string, any>);
  expect(lines[0]).toMatchObject({ payment: { method: 'x402', token: 'USDC' } });
  expect(lines.at(-1)).toMatchObject({ status: 'confirmed' });
  const next = await cluster.leader();
  expect(next).not.toBe(leader);

  // Exactly one settlement: the authorization spent once, the amount moved once.
  expect(before - (await usdcOf())).toBe(BigInt(lines[0]!.payment.amount_raw));
  const used = await client.getLogs({
    address: usdc,
    event: parseAbiItem('event AuthorizationUsed(address indexed authorizer, bytes32 indexed nonce)'),
    args: { authorizer: payer.address },
    fromBlock: startBlock,
  });
  expect(used).toHaveLength(1);
  // No nonce gap: the settler sent that one transaction, and nothing waits behind a missing nonce.
  expect(await client.getTransactionCount({ address: settler, blockTag: 'latest' })).toBe(settlerNonce + 1);
  expect(await client.getTransactionCount({ address: settler, blockTag: 'pending' })).toBe(settlerNonce + 1);
});
