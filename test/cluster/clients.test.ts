/**
 * The agents' clients against the cluster layout (gateway, controllers and chain workers as processes, a real
 * kube-apiserver, Redis): the CLI executes and follows a request to confirmed, pays a 402 by x402, finds its last
 * request; the MCP server (stdio) executes and waits for confirmed. Clients of the HTTP API, so nothing in them
 * knows which layout answers.
 */
import { join } from 'node:path';
import { Client } from '@modelcontextprotocol/client';
import { StdioClientTransport } from '@modelcontextprotocol/client/stdio';
import { erc20Abi } from 'viem';
import { afterAll, beforeAll, expect, it } from 'vitest';
import { startTestCluster, type TestCluster } from '../support/cluster.ts';
import { runCli } from '../support/cli.ts';
import { tempDir } from '../support/env.ts';
import { newPayer } from '../support/payer.ts';

const CHAIN = 'base';
let cluster: TestCluster;
let journal: string;
beforeAll(async () => {
  cluster = await startTestCluster({ x402: true }); // the controller's leader settles x402 payments
  journal = join(tempDir('aw-cluster-cli-'), 'journal.jsonl');
});
afterAll(async () => {
  await cluster?.stop();
});

const env = (apiKey: string, extra: Record<string, string> = {}) => ({ AGENT_WALLET_API_KEY: apiKey, AGENT_WALLET_BASE_URL: cluster.url, AGENT_WALLET_JOURNAL: journal, ...extra });

it('CLI: execute --wait to confirmed, status --last finds it; a manual key’s 402 paid by x402 signature with pay --last', { timeout: 240_000 }, async () => {
  const counter = cluster.devnet.chain(CHAIN).testContracts.counter;
  const { apiKey } = await cluster.newKey('sponsored');
  const run = await runCli(['execute', '--agent-id', 'cl-cli', '--chain', CHAIN, '--to', counter, '--data', '0xd09de08a', '--wait', '--json'], env(apiKey));
  expect(run.code, run.stderr).toBe(0);
  const states = run.stdout.trim().split('\n').map((l) => JSON.parse(l) as { request_id: string; status: string });
  expect(states.at(-1)!.status).toBe('confirmed');
  const last = await runCli(['status', '--last', '--json'], env(apiKey));
  expect(JSON.parse(last.stdout)).toMatchObject({ request_id: states[0]!.request_id, status: 'confirmed' });

  const manual = (await cluster.newKey('manual')).apiKey;
  const quoted = await runCli(['execute', '--agent-id', 'cl-pay', '--chain', CHAIN, '--to', counter, '--data', '0xd09de08a'], env(manual));
  expect(quoted.code).toBe(4);
  const payer = await newPayer(cluster.devnet, CHAIN);
  await payer.mint('USDC', payer.address, 10_000_000n);
  // x402: the payer signs an EIP-3009 authorization (no RPC of its own); the controller's leader settles it on chain.
  const usdc = cluster.devnet.chain(CHAIN).tokens.find((t) => t.symbol === 'USDC')!.address;
  const usdcOf = () => cluster.devnet.publicClient(CHAIN).readContract({ address: usdc, abi: erc20Abi, functionName: 'balanceOf', args: [payer.address] });
  const before = await usdcOf();
  const paid = await runCli(['pay', '--last', '--method', 'x402', '--wait', '--json'], env(manual, { AGENT_WALLET_PAYER_KEY: payer.privateKey }));
  expect(paid.code, paid.stderr).toBe(0);
  const lines = paid.stdout.trim().split('\n').map((l) => JSON.parse(l) as Record<string, any>);
  expect(lines[0]).toMatchObject({ payment: { method: 'x402', token: 'USDC' } });
  expect(lines.at(-1)).toMatchObject({ status: 'confirmed' });
  expect(before - (await usdcOf())).toBe(BigInt(lines[0]!.payment.amount_raw)); // moved once, exactly the quote
});

it('devnet fund: WETH to an agent resolved through the cluster gateway, then the Compound walkthrough supplies it', { timeout: 180_000 }, async () => {
  const { apiKey } = await cluster.newKey('sponsored');
  const fund = await runCli(['devnet', 'fund', '--agent-id', 'cl-fund', '--chain', CHAIN, '--token', 'WETH', '--amount', '2', '--json'], env(apiKey, { AGENT_WALLET_DEVNET_MANIFEST: cluster.devnet.manifestPath }));
  expect(fund.code, fund.stderr).toBe(0);
  const wallet = (await fetch(`${cluster.url}/wallet?agent_id=cl-fund&chain=${CHAIN}`, { headers: { 'x-api-key': apiKey } }).then((r) => r.json())) as { smart_wallet_address: string };
  expect(JSON.parse(fund.stdout)).toMatchObject({ address: wallet.smart_wallet_address, token: 'WETH', balance: '2' });
  const supply = await runCli(['lend-b-v3', 'supply', '--agent-id', 'cl-fund', '--token', 'WETH', '--amount', '2', '--wait', '--json'], env(apiKey));
  expect(supply.code, supply.stderr).toBe(0);
  expect(JSON.parse(supply.stdout.trim().split('\n').at(-1)!)).toMatchObject({ status: 'confirmed' });
});

it('MCP over stdio: execute, then get_status waits until confirmed', { timeout: 180_000 }, async () => {
  const { apiKey } = await cluster.newKey('sponsored');
  const clean = Object.fromEntries(Object.entries(process.env).filter((e): e is [string, string] => e[1] !== undefined && !e[0].startsWith('AGENT_WALLET_')));
  const client = new Client({ name: 'cluster-test', version: '1.0.0' });
  await client.connect(new StdioClientTransport({ command: process.execPath, args: ['bin/agent-wallet.js', 'mcp'], env: { ...clean, ...env(apiKey) }, stderr: 'pipe' }));
  try {
    const run = (await client.callTool({
      name: 'execute',
      arguments: { agent_id: 'cl-mcp', chain: CHAIN, target_contract: cluster.devnet.chain(CHAIN).testContracts.counter, calldata: '0xd09de08a' },
    })) as { isError?: boolean; structuredContent?: { request_id: string } };
    expect(run.isError).toBeFalsy();
    const status = (await client.callTool({ name: 'get_status', arguments: { request_id: run.structuredContent!.request_id, wait_seconds: 30 } })) as {
      structuredContent?: { status: string };
    };
    expect(status.structuredContent!.status).toBe('confirmed');
  } finally {
    await client.close();
  }
});

it('GET /status/:id with a wait answers on the confirmation (the gateway informer of the cluster layout)', { timeout: 120_000 }, async () => {
  const { apiKey } = await cluster.newKey('sponsored');
  const rpc = (method: string, params: unknown[] = []) => cluster.devnet.publicClient(CHAIN).request({ method: method as never, params: params as never });
  const get = async (path: string, headers: Record<string, string> = {}) => {
    const res = await fetch(`${cluster.url}${path}`, { headers: { 'x-api-key': apiKey, ...headers } });
    return { status: res.status, headers: res.headers, body: (await res.json()) as { status: string; tx_hash: string | null } };
  };
  const executed = await fetch(`${cluster.url}/execute`, {
    method: 'POST',
    headers: { 'x-api-key': apiKey, 'content-type': 'application/json' },
    body: JSON.stringify({ agent_id: 'cl-wait', chain: CHAIN, target_contract: cluster.devnet.chain(CHAIN).testContracts.counter, calldata: '0xd09de08a' }),
  });
  expect(executed.status).toBe(200);
  const { request_id: id } = (await executed.json()) as { request_id: string };
  // First operation of this wallet, then a second one held in the mempool: it waits at `broadcasting` until a block.
  let seen = await get(`/status/${id}`);
  while (seen.body.status !== 'confirmed') seen = await get(`/status/${id}?wait=30&known_status=${seen.body.status}`);

  await rpc('evm_setAutomine', [false]);
  try {
    const second = await fetch(`${cluster.url}/execute`, {
      method: 'POST',
      headers: { 'x-api-key': apiKey, 'content-type': 'application/json' },
      body: JSON.stringify({ agent_id: 'cl-wait', chain: CHAIN, target_contract: cluster.devnet.chain(CHAIN).testContracts.counter, calldata: '0xd09de08a' }),
    });
    const next = ((await second.json()) as { request_id: string }).request_id;
    let state = await get(`/status/${next}`);
    expect(state.headers.get('etag')).toMatch(/^"[A-Za-z0-9_-]{27}"$/);
    while (state.body.status !== 'broadcasting') {
      state = await get(`/status/${next}`, { prefer: 'wait=30', 'if-none-match': state.headers.get('etag')! });
      expect(['queued', 'broadcasting']).toContain(state.body.status);
    }
    const onConfirmation = get(`/status/${next}?wait=30&known_status=broadcasting`);
    // Not mined: a wait of 1 s ends with the same record (and the wait above is open by then, in all likelihood).
    const unchanged = await get(`/status/${next}?wait=1&known_status=broadcasting`);
    expect(unchanged.body).toEqual(state.body);
    expect(unchanged.headers.get('preference-applied')).toBe('wait=1');
    await rpc('evm_mine');
    const answered = await onConfirmation;
    expect(answered.status).toBe(200);
    expect(answered.headers.get('preference-applied')).toBe('wait=30');
    expect(answered.body).toMatchObject({ status: 'confirmed', tx_hash: expect.stringMatching(/^0x[0-9a-f]{64}$/) });
  } finally {
    await rpc('evm_setAutomine', [true]);
  }
});
