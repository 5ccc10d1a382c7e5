/**
 * lend-b-v3 (Compound v3) end to end on the devnet's Comet: every endpoint through the HTTP API, the simulation's
 * effects against what execution then does, every refusal with its reason, and a manual key's 402.
 */
import { join } from 'node:path';
import { Client } from '@modelcontextprotocol/client';
import { StdioClientTransport } from '@modelcontextprotocol/client/stdio';
import type { Address } from 'viem';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createClient, type AgentWalletClient } from '../../../src/client/index.ts';
import { runCli } from '../../support/cli.ts';
import { tempDir } from '../../support/env.ts';
import { familyCalls, fundTokens, payProtocolAction } from '../../support/protocols.ts';
import { startTestService, type TestService } from '../../support/service.ts';

const SLUG = 'lend-b-v3';
const FUNDER = 1; // this file's funded account
type Json = Record<string, any>;

let svc: TestService;
let client: AgentWalletClient;
let calls: ReturnType<typeof familyCalls>;
beforeAll(async () => {
  svc = await startTestService();
  client = createClient({ baseUrl: svc.url, apiKey: (await svc.newKey('sponsored')).apiKey, attempts: 1 });
  calls = familyCalls(client, SLUG);
});
const get = (path: string, q: Record<string, string> = {}) => calls.get(path, q);
const simulate = (action: string, body: Json) => calls.simulate(action, body);
const execute = (action: string, body: Json) => calls.execute(action, body);
const refusal = (p: Promise<{ ok: boolean; error?: unknown }>) => calls.refusal(p);
afterAll(async () => {
  await svc?.stop();
});

const position = async (agent: string) => (await get('position', { agent_id: agent })).positions[0];

describe('lend-b-v3: Compound v3 on the devnet', () => {
  let wallet: Address;
  const agent = `comet-${Date.now()}`;
  beforeAll(async () => {
    const w = await client.wallet(agent, 'base');
    if (!w.ok) throw w.error;
    wallet = w.value.smart_wallet_address as Address;
    await fundTokens(svc.devnet, 'base', wallet, { WETH: '10', USDC: '2000' }, FUNDER);
  });

  it('markets: the base token, the collateral with its factors and price, rates', async () => {
    const { markets } = await get('markets', {});
    expect(markets[0]).toMatchObject({
      name: 'cUSDCv3',
      base_token: { symbol: 'USDC', decimals: 6 },
      base_borrow_min: { raw: '1000000', formatted: '1' },
      collaterals: [{ token: { symbol: 'WETH', decimals: 18 }, price_usd: '3000', borrow_collateral_factor: '0.775', liquidate_collateral_factor: '0.825' }],
    });
    // The protocol's own name is an alias of the slug.
    const aliased = await client.protocols.read<Json>('compound-v3', 'markets');
    expect(aliased.ok && aliased.value.markets[0].comet).toBe(markets[0].comet);
  });

  it('supply collateral: the simulation predicts the balances and the capacity; the position then shows them', async () => {
    const sim = await simulate('supply', { agent_id: agent, token: 'WETH', amount: '5' });
    expect(sim).toMatchObject({ status: 'pending', tx_hash: null });
    expect(sim.calls).toHaveLength(2); // approve + supply, one operation
    expect(sim.effects.balance_changes).toEqual([
      expect.objectContaining({ token: expect.objectContaining({ symbol: 'WETH' }), before: expect.objectContaining({ formatted: '10' }), change: expect.objectContaining({ formatted: '-5' }) }),
    ]);
    expect(sim.effects.position_before).toMatchObject({ collateral: [], borrow_capacity: { raw: '0' }, health_factor: null });
    expect(sim.effects.position_after).toMatchObject({ collateral_value_usd: '15000', borrow_capacity: { formatted: '11625' } });

    await execute('supply', { agent_id: agent, token: 'weth', amount: '5' }); // a symbol in any case
    expect(await position(agent)).toMatchObject({ collateral: [{ token: { symbol: 'WETH' }, balance: { formatted: '5' } }], borrow_capacity: { formatted: '11625' } });
    const { markets } = await get('balances', { agent_id: agent });
    expect(markets[0].tokens.find((t: Json) => t.token.symbol === 'WETH')).toMatchObject({ wallet: { formatted: '5' }, in_protocol: { formatted: '5' } });
  });

  it('borrow: capacity falls and the health factor drops as the simulation predicted', async () => {
    const sim = await simulate('borrow', { agent_id: agent, amount: '1000' });
    expect(sim.calls).toHaveLength(1);
    expect(sim.effects.balance_changes[0]).toMatchObject({ token: { symbol: 'USDC' }, change: { formatted: '1000' } });
    const predicted = sim.effects.position_after;
    expect(predicted.health_factor).toBe('12.375'); // 15000 × 0.825 / 1000
    expect(predicted.liquidation_prices[0]).toMatchObject({ token: { symbol: 'WETH' }, price_usd: expect.stringMatching(/^242\.42/) });

    await execute('borrow', { agent_id: agent, amount: '1000' });
    const after = await position(agent);
    expect(Number(after.health_factor)).toBeCloseTo(Number(predicted.health_factor), 2);
    const capacity = await get('borrow-capacity', { agent_id: agent });
    expect(Number(capacity.borrow_capacity.formatted)).toBeCloseTo(10625, 2);
    expect(capacity).toMatchObject({ market: 'cUSDCv3', borrowed: { formatted: expect.stringMatching(/^1000(\.0*[0-9]+)?$/) } });
  });

  it('refuses a borrow beyond capacity, or under the minimum, with Comet’s own error decoded; nothing is queued', async () => {
    const beyond = await refusal(client.protocols.simulate(SLUG, 'borrow', { agent_id: agent, amount: '20000' }));
    expect(beyond).toMatchObject({ status: 400, code: 'simulation_failed' });
    expect(beyond.body.protocol_error).toMatchObject({ protocol: 'Compound v3', name: 'NotCollateralized' });
    const executed = await refusal(client.protocols.execute(SLUG, 'borrow', { agent_id: agent, amount: '20000' }));
    expect(executed.body).toMatchObject({ error: 'simulation_failed', protocol_error: { name: 'NotCollateralized' }, request_id: expect.any(String) });
    const small = await refusal(client.protocols.simulate(SLUG, 'borrow', { agent_id: `${agent}-small`, amount: '0.5' }));
    expect(small.body.protocol_error).toMatchObject({ name: 'BorrowTooSmall' });
  });

  it('refuses bad input with a 400 naming the field', async () => {
    const cases: [string, Json, string, string][] = [
      ['supply', { agent_id: agent, token: 'WETH', amount: '500' }, 'insufficient_balance', 'amount'],
      ['supply', { agent_id: agent, token: 'DAI', amount: '1' }, 'unknown_token', 'token'],
      ['supply', { agent_id: agent, token: 'USDC', amount: '1.1234567' }, 'invalid_amount', 'amount'],
      ['supply', { agent_id: agent, token: 'USDC', amount: '0' }, 'invalid_amount', 'amount'],
      ['supply', { agent_id: agent, token: 'USDC' }, 'missing_field', 'amount'],
      ['supply', { agent_id: agent, token: 'USDC', amount: '1', amount_raw: '1' }, 'invalid_request_shape', 'body'],
      ['supply', { agent_id: agent, token: 'USDC', amount: '1', chain: 'ethereum' }, 'unsupported_chain', 'chain'],
      ['supply', { agent_id: agent, token: 'USDC', amount: '1', market: 'cWETHv3' }, 'unknown_market', 'market'],
      ['repay', { agent_id: agent, amount: '5000' }, 'amount_above_debt', 'amount'],
      ['withdraw', { agent_id: agent, token: 'WETH', amount: '6' }, 'amount_above_supplied', 'amount'],
      ['withdraw', { agent_id: agent, token: 'USDC', amount: 'max' }, 'nothing_to_withdraw', 'token'],
    ];
    for (const [action, body, code, field] of cases) {
      const e = await refusal(client.protocols.simulate(SLUG, action, body));
      expect({ action, status: e.status, code: e.code, field: e.body.field }).toEqual({ action, status: 400, code, field });
    }
    expect(await refusal(client.protocols.read(SLUG, 'position', { agent_id: agent, chain: 'arb' }))).toMatchObject({ status: 400, code: 'unsupported_chain' });
  });

  it('repay part, then max to exactly zero; withdraw the collateral with max', async () => {
    await execute('repay', { agent_id: agent, amount_raw: '400000000' });
    expect(Number((await position(agent)).borrowed.formatted)).toBeCloseTo(600, 3);
    const sim = await simulate('repay', { agent_id: agent, amount: 'max' });
    expect(sim.calls).toHaveLength(3); // approve, supply(max), approve(0)
    expect(sim.effects.position_after).toMatchObject({ borrowed: { raw: '0' }, health_factor: null });
    await execute('repay', { agent_id: agent, amount: 'max' });
    expect(await position(agent)).toMatchObject({ borrowed: { raw: '0' }, supplied: { raw: '0' } });
    expect((await refusal(client.protocols.simulate(SLUG, 'repay', { agent_id: agent, amount: 'max' }))).code).toBe('nothing_to_repay');

    await execute('withdraw', { agent_id: agent, token: 'WETH', amount: 'max' });
    expect(await position(agent)).toMatchObject({ collateral: [] });
    const { markets } = await get('balances', { agent_id: agent });
    expect(markets[0].tokens.find((t: Json) => t.token.symbol === 'WETH').wallet.formatted).toBe('10');
  });

  it('supply the base token, then withdraw it all with max', async () => {
    await execute('supply', { agent_id: agent, token: 'USDC', amount: '100' });
    expect(Number((await position(agent)).supplied.formatted)).toBeCloseTo(100, 3);
    await execute('withdraw', { agent_id: agent, token: 'USDC', amount: 'max' });
    expect((await position(agent)).supplied.raw).toBe('0');
  });

  it('under a manual key an action gets its 402 and confirms once paid, like any execute', async () => {
    const manual = createClient({ baseUrl: svc.url, apiKey: (await svc.newKey('manual')).apiKey, attempts: 1 });
    const payAgent = `${agent}-pays`;
    const w = await manual.wallet(payAgent, 'base');
    if (!w.ok) throw w.error;
    await fundTokens(svc.devnet, 'base', w.value.smart_wallet_address as Address, { USDC: '50' }, FUNDER);
    await payProtocolAction(svc.devnet, manual, SLUG, 'supply', { agent_id: payAgent, token: 'USDC', amount: '10' });
  });

  it('the family’s CLI commands and MCP tools, generated from the registry, work', { timeout: 180_000 }, async () => {
    const apiKey = (await svc.newKey('sponsored')).apiKey;
    const cliAgent = `${agent}-cli`;
    const env = { AGENT_WALLET_API_KEY: apiKey, AGENT_WALLET_BASE_URL: svc.url, AGENT_WALLET_JOURNAL: join(tempDir('aw-lendb-'), 'j.jsonl') };
    const w = await createClient({ baseUrl: svc.url, apiKey }).wallet(cliAgent, 'base');
    if (!w.ok) throw w.error;
    await fundTokens(svc.devnet, 'base', w.value.smart_wallet_address as Address, { WETH: '2' }, FUNDER);

    const sim = await runCli(['lend-b-v3', 'supply', '--agent-id', cliAgent, '--token', 'WETH', '--amount', '1', '--simulate', '--json'], env);
    expect(sim.code, sim.stderr).toBe(0);
    expect(JSON.parse(sim.stdout).effects.position_after.borrow_capacity.formatted).toBe('2325');
    const run = await runCli(['compound-v3', 'supply', '--agent-id', cliAgent, '--token', 'WETH', '--amount', '1', '--wait'], env);
    expect(run.code, run.stderr).toBe(0);
    expect(run.stdout).toMatch(/status\s+confirmed/);
    const pos = await runCli(['lend-b-v3', 'position', '--agent-id', cliAgent], env);
    expect(pos.stdout).toMatch(/borrow_capacity:\s+2325 \(raw 2325000000\)/);
    const bad = await runCli(['lend-b-v3', 'borrow', '--agent-id', cliAgent, '--amount', '99999', '--json'], env);
    expect(bad.code).toBe(3);
    expect(JSON.parse(bad.stdout)).toMatchObject({ error: 'simulation_failed', protocol_error: { name: 'NotCollateralized' } });

    const mcp = new Client({ name: 'lend-b-v3-test', version: '1.0.0' });
    const clean = Object.fromEntries(Object.entries(process.env).filter((e): e is [string, string] => e[1] !== undefined && !e[0].startsWith('AGENT_WALLET_')));
    await mcp.connect(new StdioClientTransport({ command: process.execPath, args: ['bin/agent-wallet.js', 'mcp'], env: { ...clean, ...env }, stderr: 'pipe' }));
    try {
      const call = async (name: string, args: Json) => (await mcp.callTool({ name, arguments: args })) as { isError?: boolean; structuredContent?: Json; content: { text: string }[] };
      const simulated = await call('lend_b_v3_act', { action: 'borrow', agent_id: cliAgent, amount: '100', simulate: true });
      expect(simulated.isError, simulated.content[0]?.text).toBeFalsy();
      expect(simulated.structuredContent!.effects.position_after.borrowed.formatted).toBe('100');
      expect(simulated.content[0]!.text).toMatch(/health factor after 24\.75/);
      const borrowed = await call('lend_b_v3_act', { action: 'borrow', agent_id: cliAgent, amount: '100' });
      expect(borrowed.structuredContent).toMatchObject({ status: 'queued' });
      const status = await call('get_status', { request_id: borrowed.structuredContent!.request_id, wait_seconds: 30 });
      expect(status.structuredContent!.status).toBe('confirmed');
      const capacity = await call('lend_b_v3_read', { action: 'borrow-capacity', agent_id: cliAgent });
      expect(Number(capacity.structuredContent!.borrow_capacity.formatted)).toBeCloseTo(2225, 2);
      const refused = await call('lend_b_v3_act', { action: 'supply', agent_id: cliAgent, token: 'DAI', amount: '1' });
      expect(refused.isError).toBe(true);
      expect(refused.structuredContent).toMatchObject({ error: 'unknown_token', field: 'token', http_status: 400 });
      // A field the action does not take is refused before anything is sent, naming what it takes.
      const foreign = await call('lend_b_v3_read', { action: 'markets', agent_id: cliAgent });
      expect(foreign.isError).toBe(true);
      expect(foreign.structuredContent).toMatchObject({ error: 'invalid_arguments', field: 'agent_id' });
      expect(foreign.content[0]!.text).toContain('it takes markets ()');
    } finally {
      await mcp.close();
    }
  });

  it('every endpoint is protected: 401 without a key', async () => {
    const anonymous = createClient({ baseUrl: svc.url, apiKey: undefined, attempts: 1 });
    for (const path of ['markets', 'position', 'balances', 'borrow-capacity']) {
      expect((await refusal(anonymous.protocols.read(SLUG, path))).status).toBe(401);
    }
    for (const action of ['supply', 'withdraw', 'repay', 'borrow']) {
      expect((await refusal(anonymous.protocols.simulate(SLUG, action, {}))).body.error).toBe('missing X-API-Key header');
    }
    expect((await refusal(anonymous.protocols.read('pool-a-v3', 'pools'))).status).toBe(401);
  });

  it('answers a wrong method 405 with the methods the path has, and an unknown or unserved path 404 with a code', async () => {
    const { apiKey } = await svc.newKey('sponsored');
    const call = async (method: string, path: string) => {
      const res = await fetch(`${svc.url}${path}`, { method, headers: { 'x-api-key': apiKey } });
      return { status: res.status, allow: res.headers.get('allow'), error: ((await res.json()) as Json).error };
    };
    expect(await call('DELETE', `/protocols/${SLUG}/markets`)).toMatchObject({ status: 405, allow: 'GET, HEAD', error: 'method_not_allowed' });
    expect(await call('GET', `/protocols/${SLUG}/supply`)).toMatchObject({ status: 405, allow: 'POST', error: 'method_not_allowed' });
    expect(await call('GET', `/protocols/${SLUG}/nothing-here`)).toMatchObject({ status: 404, error: 'not_found' });
    // Every spec endpoint is served now: a path the spec does not name is unknown under any slug or alias.
    expect(await call('POST', '/protocols/perp-v2/shifts')).toMatchObject({ status: 404, error: 'not_found' });
    expect(await call('GET', '/protocols/gmx-v2/claims')).toMatchObject({ status: 405, allow: 'POST', error: 'method_not_allowed' });
    expect(await call('GET', '/protocols/uniswap-v3/swap/quote')).toMatchObject({ status: 405, allow: 'POST', error: 'method_not_allowed' });
  });
});
