/**
 * The MCP tool server driven by the MCP SDK's own Client, over stdio (`agent-wallet mcp` spawned as an MCP host
 * would) and over streamable HTTP: tools listed with their schemas, each tool called, a full execute to
 * confirmed, a 402 paid through the pay tool, bad input as a tool error.
 */
import { request } from 'node:http';
import { join } from 'node:path';
import { Client, StreamableHTTPClientTransport } from '@modelcontextprotocol/client';
import { StdioClientTransport } from '@modelcontextprotocol/client/stdio';
import { encodeFunctionData, type Address } from 'viem';
import { privateKeyToAccount } from 'viem/accounts';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createClient } from '../../src/client/client.ts';
import { openJournal } from '../../src/client/journal.ts';
import { counterAbi } from '../../src/devnet/contracts.ts';
import { serveMcpHttp, type RunningMcpHttp } from '../../src/mcp/http.ts';
import { createServerFactory } from '../../src/mcp/server.ts';
import { runCli } from '../support/cli.ts';
import { tempDir, testDevnet } from '../support/env.ts';
import { newPayer } from '../support/payer.ts';
import { startTestService, type TestService } from '../support/service.ts';

const CHAIN = 'base';
const TOOLS = ['get_wallet', 'get_balance', 'simulate', 'execute', 'get_status', 'cancel_request', 'get_payment_quote', 'pay', 'recent_feed'];

let svc: TestService;
let counter: Address;
beforeAll(async () => {
  svc = await startTestService({ payments: { x402SettlerKey: testDevnet().manifest.accounts.settler!.privateKey } });
  counter = svc.devnet.chain(CHAIN).testContracts.counter;
});
afterAll(async () => {
  await svc?.stop();
});

type ToolResult = { isError?: boolean; content: { type: string; text?: string }[]; structuredContent?: Record<string, any> };
const call = async (client: Client, name: string, args: Record<string, unknown>) => (await client.callTool({ name, arguments: args })) as ToolResult;
const text = (r: ToolResult) => r.content.map((c) => c.text ?? '').join('\n');

describe('MCP over stdio: agent-wallet mcp as a host spawns it', { timeout: 180_000 }, () => {
  let client: Client;
  let clientId: string;
  beforeAll(async () => {
    const { apiKey, clientId: id } = await svc.newKey('sponsored');
    clientId = id;
    const clean = Object.fromEntries(Object.entries(process.env).filter((e): e is [string, string] => e[1] !== undefined && !e[0].startsWith('AGENT_WALLET_')));
    client = new Client({ name: 'agent-wallet-test', version: '1.0.0' });
    await client.connect(
      new StdioClientTransport({
        command: process.execPath,
        args: ['bin/agent-wallet.js', 'mcp'],
        env: { ...clean, AGENT_WALLET_API_KEY: apiKey, AGENT_WALLET_BASE_URL: svc.url, AGENT_WALLET_JOURNAL: join(tempDir('aw-mcp-'), 'journal.jsonl') },
        stderr: 'pipe',
      }),
    );
  });
  afterAll(async () => {
    await client?.close();
  });

  it('lists every tool with a description for a model, an input and an output schema', async () => {
    const { tools } = await client.listTools();
    expect(tools.map((t) => t.name).slice(0, TOOLS.length)).toEqual(TOOLS);
    expect(tools.map((t) => t.name)).toEqual(expect.arrayContaining(['lend_b_v3_read', 'lend_b_v3_act', 'lend_c_read', 'lend_c_act']));
    for (const t of tools) {
      expect(t.description!.length, t.name).toBeGreaterThan(80);
      expect(t.inputSchema.type).toBe('object');
    }
    // Output schemas only where the answer is this server's own shape, not the API's record the summary describes.
    expect(tools.filter((t) => t.outputSchema).map((t) => t.name)).toEqual(['get_payment_quote', 'pay']);
    const act = tools.find((t) => t.name === 'lend_b_v3_act')!;
    expect(act.annotations).toMatchObject({ readOnlyHint: false, destructiveHint: true });
    expect((act.inputSchema.properties as Record<string, { enum?: string[] }>).action!.enum).toEqual(['supply', 'withdraw', 'repay', 'borrow']);
    expect(tools.find((t) => t.name === 'lend_b_v3_read')!.annotations).toMatchObject({ readOnlyHint: true });
    const execute = tools.find((t) => t.name === 'execute')!;
    expect(execute.annotations).toMatchObject({ readOnlyHint: false, destructiveHint: true });
    expect(Object.keys(execute.inputSchema.properties ?? {})).toEqual(
      expect.arrayContaining(['agent_id', 'chain', 'target_contract', 'calldata', 'value', 'batch_calls', 'idempotency_key', 'payment_proof']),
    );
  });

  it('calls each read tool: wallet, balance, simulate, feed; results are structured with a one-line summary', async () => {
    const wallet = await call(client, 'get_wallet', { agent_id: 'mcp-reads', chain: CHAIN });
    expect(wallet.isError).toBeFalsy();
    expect(wallet.structuredContent).toMatchObject({ agent_id: 'mcp-reads', chain: CHAIN, deployed: false });
    expect(text(wallet)).toContain(wallet.structuredContent!.smart_wallet_address);
    const balance = await call(client, 'get_balance', { agent_id: 'mcp-reads', chain: CHAIN });
    expect(balance.structuredContent).toMatchObject({ smart_wallet_address: wallet.structuredContent!.smart_wallet_address });
    const sim = await call(client, 'simulate', { agent_id: 'mcp-reads', chain: CHAIN, target_contract: counter, calldata: '0xd09de08a' });
    expect(sim.structuredContent).toMatchObject({ status: 'pending', tx_hash: null });
    expect(text(sim)).toContain('nothing was broadcast');
    const feed = await call(client, 'recent_feed', { limit: 2 });
    expect(feed.isError).toBeFalsy();
    expect(feed.structuredContent!.executions.length).toBeLessThanOrEqual(2);
  });

  it('check_policy reads the agent’s policies and dry-runs a call against them', async () => {
    const none = await call(client, 'check_policy', { agent_id: 'mcp-policy', chain: CHAIN });
    expect([none.isError ?? false, text(none)]).toEqual([false, 'no policy: the key allows what its payment mode allows']);
    await svc.store.create({
      apiVersion: 'agentwallet.dev/v1alpha1',
      kind: 'AgentPolicy',
      metadata: { name: `${clientId}-mcp`, namespace: 'default' },
      spec: { apiClient: clientId, agents: { match: 'exact', agentId: 'mcp-policy' }, suspended: false, rules: [{ name: 'counter-only', action: 'accept', targets: [counter] }] },
    });
    await expect.poll(async () => text(await call(client, 'check_policy', { agent_id: 'mcp-policy', chain: CHAIN })), { timeout: 10_000 }).toBe(`policies: ${clientId}-mcp`);
    const ok = await call(client, 'check_policy', { agent_id: 'mcp-policy', chain: CHAIN, target_contract: counter, calldata: '0xd09de08a' });
    expect(ok.structuredContent).toMatchObject({ decision: 'allow', accepted: [{ rule: 'counter-only', call_index: 0 }] });
    const denied = await call(client, 'check_policy', { agent_id: 'mcp-policy', chain: CHAIN, target_contract: svc.devnet.chain(CHAIN).testContracts.gate, calldata: '0x' });
    expect(denied.structuredContent).toMatchObject({ decision: 'deny', error: 'policy_denied', policy: `${clientId}-mcp`, rule: null, call_index: 0 });
    expect(text(denied)).toMatch(/^deny: call 0 .* is accepted by no rule/);
  });

  it('executes a batch and waits in get_status until confirmed', async () => {
    const incrementBy = (n: bigint) => encodeFunctionData({ abi: counterAbi, functionName: 'incrementBy', args: [n] });
    const run = await call(client, 'execute', {
      agent_id: 'mcp-exec',
      chain: CHAIN,
      batch_calls: [
        { target_contract: counter, calldata: incrementBy(1n) },
        { target_contract: counter, calldata: incrementBy(2n) },
      ],
    });
    expect(run.isError, text(run)).toBeFalsy();
    expect(run.structuredContent).toMatchObject({ status: 'queued' });
    const status = await call(client, 'get_status', { request_id: run.structuredContent!.request_id, wait_seconds: 30 });
    expect(status.structuredContent).toMatchObject({ request_id: run.structuredContent!.request_id, status: 'confirmed', calls: 2 });
    expect(text(status)).toMatch(/is confirmed, tx 0x[0-9a-f]{64}/);
    // Too late to cancel: a tool error carrying the API's code and why.
    const late = await call(client, 'cancel_request', { request_id: run.structuredContent!.request_id });
    expect(late.isError).toBe(true);
    expect(late.structuredContent).toMatchObject({ error: 'not_cancellable', reason: 'finished', status: 'confirmed', http_status: 409 });
  });

  it('bad input is a tool error before anything is sent; the API’s refusal is a tool error carrying its code', async () => {
    const bad = await call(client, 'get_wallet', { agent_id: '' });
    expect(bad.isError).toBe(true);
    expect(text(bad)).toMatch(/Input validation error.*agent_id/);
    const badChain = await call(client, 'simulate', { agent_id: 'x', chain: 'solana', target_contract: counter, calldata: '0x' });
    expect(badChain.isError).toBe(true);
    const reverting = await call(client, 'simulate', {
      agent_id: 'mcp-bad',
      chain: CHAIN,
      target_contract: counter,
      calldata: encodeFunctionData({ abi: counterAbi, functionName: 'fail' }),
    });
    expect(reverting.isError).toBe(true);
    expect(reverting.structuredContent).toMatchObject({ error: 'simulation_failed', http_status: 400 });
    const missing = await call(client, 'get_status', { request_id: 'req-01jzzzzzzzzzzzzzzzzzzzzzzz' });
    expect(missing.structuredContent).toMatchObject({ error: 'not_found', http_status: 404 });
  });
});

describe('MCP over streamable HTTP, with a payer: a 402 becomes a quote, the pay tool pays it', { timeout: 180_000 }, () => {
  let client: Client;
  let http: RunningMcpHttp;
  let payerAddress: Address;
  beforeAll(async () => {
    const { apiKey } = await svc.newKey('manual');
    const payer = await newPayer(svc.devnet, CHAIN);
    await payer.mint('USDC', payer.address, 10_000_000n);
    payerAddress = payer.address;
    const journal = openJournal(join(tempDir('aw-mcp-http-'), 'journal.jsonl'));
    http = await serveMcpHttp(
      createServerFactory({
        client: createClient({ baseUrl: svc.url, apiKey, journal }),
        journal,
        payer: { account: privateKeyToAccount(payer.privateKey), rpcUrls: { [CHAIN]: svc.devnet.chain(CHAIN).rpcUrl } },
      }),
      { host: '127.0.0.1', port: 0 },
    );
    client = new Client({ name: 'agent-wallet-test', version: '1.0.0' });
    await client.connect(new StreamableHTTPClientTransport(new URL(http.url)));
  });
  afterAll(async () => {
    await client?.close();
    await http?.close();
  });

  it('execute answers payment_required with what to pay and how; get_payment_quote reads it; pay pays; the request confirms', async () => {
    const args = { agent_id: 'mcp-paid', chain: CHAIN, target_contract: counter, calldata: '0xd09de08a' };
    const first = await call(client, 'execute', args);
    expect(first.isError).toBe(true);
    const quote = first.structuredContent!;
    expect(quote).toMatchObject({ error: 'payment_required', chain: CHAIN, accepted_tokens: ['USDC', 'aUSD'], http_status: 402, x402_offered: true });
    expect(text(first)).toContain(`Call the pay tool with request_id "${quote.request_id}"`);
    expect(text(first)).toContain(quote.payment_address);

    // Waiting cannot move a request that waits for the caller's payment: get_status says so and what to do.
    const waiting = await call(client, 'get_status', { request_id: quote.request_id, wait_seconds: 30 });
    expect(waiting.structuredContent).toMatchObject({ request_id: quote.request_id, status: 'payment_required' });
    expect(text(waiting)).toContain('get_payment_quote');

    const read = await call(client, 'get_payment_quote', { request_id: quote.request_id });
    expect(read.structuredContent).toMatchObject({ payment_required: true, payer_configured: true, quote: { request_id: quote.request_id, required_amount_raw: quote.required_amount_raw } });

    const paid = await call(client, 'pay', { request_id: quote.request_id, method: 'transfer', token: 'USDC' });
    expect(paid.isError, text(paid)).toBeFalsy();
    expect(paid.structuredContent).toMatchObject({
      result: { request_id: quote.request_id, status: 'queued' },
      payment: { method: 'transfer', token: 'USDC', amount_raw: quote.required_amount_raw.USDC },
    });
    const done = await call(client, 'get_status', { request_id: quote.request_id, wait_seconds: 30 });
    expect(done.structuredContent).toMatchObject({ status: 'confirmed' });
    const stored = await svc.store.get('ExecutionRequest', quote.request_id);
    expect(stored.status?.payment?.paid).toMatchObject({ payer: payerAddress, token: 'USDC', method: 'proof' });

    const again = await call(client, 'get_payment_quote', { request_id: quote.request_id });
    expect(again.structuredContent).toMatchObject({ payment_required: false, quote: null });
  });

  it('cancel_request ends a request waiting for its payment: failed (cancelled), the same answer when repeated', async () => {
    const first = await call(client, 'execute', { agent_id: 'mcp-cancel', chain: CHAIN, target_contract: counter, calldata: '0xd09de08a' });
    expect(first.structuredContent).toMatchObject({ error: 'payment_required' });
    const id = first.structuredContent!.request_id as string;
    const cancelled = await call(client, 'cancel_request', { request_id: id });
    expect(cancelled.isError, text(cancelled)).toBeFalsy();
    expect(cancelled.structuredContent).toMatchObject({ request_id: id, status: 'failed', failure: { code: 'cancelled' }, tx_hash: null });
    expect(text(cancelled)).toContain(`${id} is cancelled`);
    const again = await call(client, 'cancel_request', { request_id: id });
    expect(again.structuredContent).toEqual(cancelled.structuredContent);
  });

  it('pay for a request this server did not send is a tool error saying why', async () => {
    const r = await call(client, 'pay', { request_id: 'req-idem-0000000000000000000000000000000000000000' });
    expect(r.isError).toBe(true);
    expect(r.structuredContent).toMatchObject({ error: 'unknown_request' });
  });

  it('refuses a request whose Host or Origin is not this machine (DNS rebinding)', async () => {
    // node:http, not fetch: fetch drops a Host header it is given.
    const post = (headers: Record<string, string>) =>
      new Promise<number>((resolve, reject) => {
        const u = new URL(http.url);
        const req = request(
          { host: u.hostname, port: u.port, path: u.pathname, method: 'POST', headers: { 'content-type': 'application/json', accept: 'application/json, text/event-stream', ...headers } },
          (res) => {
            res.resume();
            resolve(res.statusCode!);
          },
        );
        req.once('error', reject);
        req.end(JSON.stringify({ jsonrpc: '2.0', id: 1, method: 'tools/list' }));
      });
    expect(await post({ host: 'attacker.example' })).toBe(403);
    expect(await post({ origin: 'https://attacker.example' })).toBe(403);
  });
});

describe('agent-wallet mcp --http', { timeout: 120_000 }, () => {
  it('serves /mcp on the port it prints, and refuses a public address without a token', async () => {
    const { apiKey } = await svc.newKey('sponsored');
    const env = { AGENT_WALLET_API_KEY: apiKey, AGENT_WALLET_BASE_URL: svc.url, AGENT_WALLET_JOURNAL: join(tempDir('aw-mcp-cli-'), 'j.jsonl') };
    const refused = await runCli(['mcp', '--http', '--host', '0.0.0.0', '--port', '0'], env);
    expect(refused.code).toBe(2);
    expect(refused.stderr).toContain('AGENT_WALLET_MCP_TOKEN');

    const served = runCli(['mcp', '--http', '--port', '0'], env);
    try {
      const url = await new Promise<string>((resolve, reject) => {
        let seen = '';
        served.child.stderr!.on('data', (d: Buffer) => {
          seen += d.toString();
          const m = /streamable HTTP on (\S+)/.exec(seen);
          if (m) resolve(m[1]!);
        });
        served.child.once('exit', () => reject(new Error(`exited: ${seen}`)));
      });
      const client = new Client({ name: 'agent-wallet-test', version: '1.0.0' });
      await client.connect(new StreamableHTTPClientTransport(new URL(url)));
      expect((await client.listTools()).tools.map((t) => t.name).slice(0, TOOLS.length)).toEqual(TOOLS);
      await client.close();
    } finally {
      served.child.kill('SIGTERM');
      expect((await served).code).toBe(0);
    }
  });
});
