/**
 * perp-v2 (GMX v2) liquidity and claims end to end on the devnet's GMX: a deposit simulated (its preview and bounds)
 * and executed by the keeper, followed without polling the chain (status.order, perp.deposit_executed), GM in the
 * wallet; a withdrawal of part and then the rest; a deposit the keeper cancels because the price moved (the reason
 * on the status and in its event, the tokens back); funding fees earned by a short, claimed; the refusals.
 * Cancels of pending requests need a keeper that waits and a clock that moves: perpV2RequestCancel.test.ts.
 */
import { join } from 'node:path';
import { Client } from '@modelcontextprotocol/client';
import { StdioClientTransport } from '@modelcontextprotocol/client/stdio';
import { erc20Abi, parseEther, parseUnits, type Address } from 'viem';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createClient, type AgentWalletClient } from '../../../src/client/index.ts';
import { keeperSettled, setGmxEthPrice, startEventCollector, type EventCollector } from '../../support/gmx.ts';
import { acquirePoolLock } from '../../support/poolLock.ts';
import { familyCalls, fundTokens } from '../../support/protocols.ts';
import { startTestService, type TestService } from '../../support/service.ts';
import { until } from '../../support/until.ts';
import { tempDir } from '../../support/env.ts';

const SLUG = 'perp-v2';
const CHAIN = 'arbitrum';
const FUNDER = 0;
type Json = Record<string, any>;

let svc: TestService;
let client: AgentWalletClient;
let c: ReturnType<typeof familyCalls>;
let release: () => void;
let hooks: EventCollector;

beforeAll(async () => {
  // The devnet's one GMX market is shared: deposits move its pool, and a test here moves its price feed.
  release = await acquirePoolLock('gmx');
  hooks = await startEventCollector();
  svc = await startTestService({ webhooks: { allowLoopback: true } });
  client = createClient({ baseUrl: svc.url, apiKey: (await svc.newKey('sponsored')).apiKey, attempts: 1 });
  c = familyCalls(client, SLUG);
}, 60_000);
afterAll(async () => {
  await svc?.stop();
  await hooks?.close();
  release?.();
});

describe('perp-v2 liquidity and claims on the devnet', () => {
  const agent = `perp-lp-${Date.now()}`;
  let wallet: Address;
  let market: Json;
  const chain = () => svc.devnet.publicClient(CHAIN);
  const usdc = () => svc.devnet.chain(CHAIN).tokens.find((t) => t.symbol === 'USDC')!.address;
  const held = (token: Address, owner = wallet) => chain().readContract({ address: token, abi: erc20Abi, functionName: 'balanceOf', args: [owner] });
  const gm = () => held(market.market as Address);
  const setEthPrice = (usd: string) => setGmxEthPrice(svc.devnet, usd);
  /** Executes an action and waits until the keeper has settled what it created: the request's status then. */
  const settled = async (action: string, body: Json, agentId = agent): Promise<Json> => {
    const r = await client.protocols.execute(SLUG, action, { agent_id: agentId, callback_url: hooks.url(), ...body });
    if (!r.ok) throw r.error;
    return keeperSettled(client, r.value.request_id);
  };
  const eventsOf = (id: string, n: number) => hooks.eventsOf(id, n);

  beforeAll(async () => {
    await setEthPrice('3000');
    const w = await client.wallet(agent, CHAIN);
    if (!w.ok) throw w.error;
    wallet = w.value.smart_wallet_address as Address;
    await fundTokens(svc.devnet, CHAIN, wallet, { USDC: '10000' }, FUNDER);
    await svc.devnet.walletClient(CHAIN, FUNDER).sendTransactionSync({ to: wallet, value: parseEther('3') });
    market = (await c.get('markets')).markets[0];
  });
  afterAll(() => setEthPrice('3000'));

  it('simulates a deposit: the GM it would mint at the pool value, the least it accepts, the tokens and fee leaving the wallet', async () => {
    const sim = await c.simulate('deposits', { agent_id: agent, market: 'ETH', long_amount: '0.5', short_amount: '1500' });
    const p = sim.preview;
    expect(p.kind).toBe('deposit');
    expect(Number(p.value_usd)).toBeCloseTo(3000, 6);
    expect(Number(p.market_token_price)).toBeGreaterThan(0);
    const [gmOut] = p.receive;
    // About the value over the GM price, less GMX's deposit fee.
    expect(Number(gmOut.expected)).toBeLessThan(3000 / Number(p.market_token_price));
    expect(Number(gmOut.expected)).toBeGreaterThan((3000 / Number(p.market_token_price)) * 0.98);
    expect(Number(gmOut.minimum)).toBeCloseTo(Number(gmOut.expected) * 0.995, 4);
    expect(sim.bounds).toEqual({ min_market_tokens: parseUnits(gmOut.minimum, 18).toString(), execution_fee: p.execution_fee.raw });
    const changes = Object.fromEntries(sim.effects.balance_changes.map((b: Json) => [b.token.symbol, b.change.raw]));
    expect(changes.USDC).toBe((-1_500_000_000n).toString());
    expect(BigInt(changes.ETH)).toBe(-(parseEther('0.5') + BigInt(p.execution_fee.raw)));
  });

  let deposited: bigint;
  it('deposits: confirmed once created, then executed by the keeper, GM in the wallet, told by a webhook event', async () => {
    const usdcBefore = await held(usdc());
    const quoted = (await c.simulate('deposits', { agent_id: agent, market: 'ETH', long_amount: '0.5', short_amount: '1500' })).preview.receive[0].expected as string;
    const s = await settled('deposits', { market: 'ETH', long_amount: '0.5', short_amount: '1500' });
    expect(s.status).toBe('confirmed');
    expect(s.order).toMatchObject({ state: 'executed', fill_price: null, reason: null });
    expect(usdcBefore - (await held(usdc()))).toBe(1_500_000_000n);
    deposited = await gm();
    // Exactly the quote: nothing moved the pool in between, and the quote asked GMX's Reader with the pricing type
    // (Deposit) and so the fee the keeper's execution charges.
    expect(deposited).toBe(parseUnits(quoted, 18));
    expect(deposited).toBeGreaterThanOrEqual(BigInt(s.action.input.min_market_tokens));
    const events = await eventsOf(s.request_id, 2);
    expect(events.map((e) => e.type)).toEqual(['execution.confirmed', 'perp.deposit_executed']);
    expect(events[1]!.data.order).toEqual(s.order);
    const b = await c.get('balances', { agent_id: agent });
    expect(b.market_tokens[0].balance.raw).toBe(deposited.toString());
    expect((await c.get('orders', { agent_id: agent })).requests).toEqual([]);
  });

  it('withdraws half, then the rest with amount max: USDC and native ETH back in the pool’s proportion, no GM left', async () => {
    const half = deposited / 2n;
    const sim = await c.simulate('withdrawals', { agent_id: agent, market: 'ETH', amount_raw: half.toString() });
    const [ethQuote, usdcQuote] = sim.preview.receive as Json[];
    expect(sim.preview.kind).toBe('withdrawal');
    expect(sim.preview.receive.map((r: Json) => r.token)).toEqual(['ETH', 'USDC']);
    expect(Number(sim.preview.value_usd)).toBeGreaterThan(1400);
    expect(Object.keys(sim.bounds).sort()).toEqual(['execution_fee', 'min_long_amount', 'min_short_amount']);

    const usdcBefore = await held(usdc());
    const first = await settled('withdrawals', { market: 'ETH', amount_raw: half.toString() });
    expect(first.order).toMatchObject({ state: 'executed', reason: null });
    expect(await gm()).toBe(deposited - half);
    const usdcOut = (await held(usdc())) - usdcBefore;
    // Exactly the quote (Withdrawal pricing, its fee), as for the deposit.
    expect(usdcOut).toBe(parseUnits(usdcQuote!.expected, 6));
    expect(ethQuote!.token).toBe('ETH');
    expect(usdcOut).toBeGreaterThanOrEqual(BigInt(first.action.input.min_short_amount));
    expect((await eventsOf(first.request_id, 2)).map((e) => e.type)).toEqual(['execution.confirmed', 'perp.withdrawal_executed']);

    const rest = await settled('withdrawals', { market: 'ETH', amount: 'max' });
    expect(rest.order.state).toBe('executed');
    expect(await gm()).toBe(0n);
  });

  it('a deposit the keeper cancels: the price falls before execution, fewer GM than its minimum; the reason on the status and in its event, the ETH back', async () => {
    // The keeper acts a second after it sees the deposit: the price is moved as soon as it exists (retried should the
    // keeper win that race on a loaded machine: the GM are then withdrawn again).
    let cancelled: Json | undefined;
    let ethBefore = 0n;
    for (let attempt = 0; attempt < 3 && !cancelled; attempt++) {
      await setEthPrice('3000');
      ethBefore = await chain().getBalance({ address: wallet });
      const r = await client.protocols.execute(SLUG, 'deposits', { agent_id: agent, callback_url: hooks.url(), market: 'ETH', long_amount: '0.2', slippage_bps: 0 });
      if (!r.ok) throw r.error;
      await until('the deposit to exist', async () => ((await c.get('orders', { agent_id: agent })).requests.length > 0 ? true : undefined), 20_000, 20).catch(() => undefined);
      await setEthPrice('2700');
      const s = await keeperSettled(client, r.value.request_id);
      if (s.order.state === 'cancelled') cancelled = s;
      else await setEthPrice('3000').then(() => settled('withdrawals', { market: 'ETH', amount: 'max' }));
    }
    expect(cancelled, 'the keeper cancelled one of three deposits').toBeDefined();
    expect(cancelled!.order).toMatchObject({ state: 'cancelled', fill_price: null, reason: 'MinMarketTokens' });
    const events = await eventsOf(cancelled!.request_id, 2);
    expect(events.map((e) => e.type)).toEqual(['execution.confirmed', 'perp.deposit_cancelled']);
    expect(await gm()).toBe(0n);
    // The 0.2 ETH came back, and what the keeper did not spend of the execution fee.
    expect(await chain().getBalance({ address: wallet })).toBeGreaterThanOrEqual(ethBefore - BigInt(cancelled!.action.input.execution_fee));
    await setEthPrice('3000');
  });

  it('claims the funding a short earned while longs outweighed it; nothing left to claim after', async () => {
    const shorter = `${agent}-short`;
    const w = await client.wallet(shorter, CHAIN);
    if (!w.ok) throw w.error;
    const shortWallet = w.value.smart_wallet_address as Address;
    await fundTokens(svc.devnet, CHAIN, shortWallet, { USDC: '2000' }, FUNDER);
    await svc.devnet.walletClient(CHAIN, FUNDER).sendTransactionSync({ to: shortWallet, value: parseEther('1') });
    const none = await c.refusal(client.protocols.simulate(SLUG, 'claims', { agent_id: shorter }));
    expect(none).toMatchObject({ status: 400, code: 'nothing_to_claim' });

    // The long side is larger: it pays funding, and the short's claimable grows until its position changes.
    await settled('orders', { type: 'market_increase', market: 'ETH', side: 'long', size_usd: '20000', collateral_token: 'USDC', collateral_amount: '4000' });
    await settled('orders', { type: 'market_increase', market: 'ETH', side: 'short', size_usd: '2000', collateral_token: 'USDC', collateral_amount: '500' }, shorter);
    await new Promise((r) => setTimeout(r, 3_000));
    await settled('orders', { type: 'market_decrease', market: 'ETH', side: 'short', size_usd: 'max', collateral_token: 'USDC' }, shorter);
    await settled('orders', { type: 'market_decrease', market: 'ETH', side: 'long', size_usd: 'max', collateral_token: 'USDC' });

    const claimable = (await c.get('balances', { agent_id: shorter })).claimable_funding as Json[];
    expect(claimable.length).toBeGreaterThan(0);
    const sim = await c.simulate('claims', { agent_id: shorter, market: 'ETH' });
    const gains = Object.fromEntries(sim.effects.balance_changes.map((b: Json) => [b.token.symbol, BigInt(b.change.raw)]));
    for (const x of claimable) expect(gains[x.token.symbol]).toBe(BigInt(x.amount.raw));
    const before = await held(usdc(), shortWallet);
    await c.execute('claims', { agent_id: shorter });
    const usdcClaim = claimable.find((x) => x.token.symbol === 'USDC');
    if (usdcClaim) expect((await held(usdc(), shortWallet)) - before).toBe(BigInt(usdcClaim.amount.raw));
    expect((await c.get('balances', { agent_id: shorter })).claimable_funding).toEqual([]);
    expect(await c.refusal(client.protocols.execute(SLUG, 'claims', { agent_id: shorter }))).toMatchObject({ status: 400, code: 'nothing_to_claim' });
  });

  it('the MCP tools: a deposit simulated and executed through perp_v2_act, followed with get_status; the GM withdrawn; nothing to claim', { timeout: 120_000 }, async () => {
    const env = { AGENT_WALLET_API_KEY: (await svc.newKey('sponsored')).apiKey, AGENT_WALLET_BASE_URL: svc.url, AGENT_WALLET_JOURNAL: join(tempDir('aw-perp-lp-'), 'j.jsonl') };
    const mcpAgent = `${agent}-mcp`;
    const w = await createClient({ baseUrl: svc.url, apiKey: env.AGENT_WALLET_API_KEY }).wallet(mcpAgent, CHAIN);
    if (!w.ok) throw w.error;
    await fundTokens(svc.devnet, CHAIN, w.value.smart_wallet_address as Address, { USDC: '200' }, FUNDER);
    await svc.devnet.walletClient(CHAIN, FUNDER).sendTransactionSync({ to: w.value.smart_wallet_address as Address, value: parseEther('0.1') });
    const mcp = new Client({ name: 'perp-v2-lp-test', version: '1.0.0' });
    const clean = Object.fromEntries(Object.entries(process.env).filter((e): e is [string, string] => e[1] !== undefined && !e[0].startsWith('AGENT_WALLET_')));
    await mcp.connect(new StdioClientTransport({ command: process.execPath, args: ['bin/agent-wallet.js', 'mcp'], env: { ...clean, ...env }, stderr: 'pipe' }));
    try {
      const call = async (name: string, args: Json) => (await mcp.callTool({ name, arguments: args })) as { isError?: boolean; structuredContent?: Json; content: { text: string }[] };
      const settledByMcp = async (args: Json) => {
        const r = await call('perp_v2_act', { agent_id: mcpAgent, ...args });
        expect(r.isError, r.content[0]?.text).toBeFalsy();
        return until(`${args.action} to be settled`, async () => {
          const st = await call('get_status', { request_id: r.structuredContent!.request_id, wait_seconds: 10 });
          return (st.structuredContent as Json | undefined)?.order?.state === 'executed' ? st.structuredContent! : undefined;
        }, 60_000);
      };
      const sim = await call('perp_v2_act', { action: 'deposits', simulate: true, agent_id: mcpAgent, market: 'ETH', short_amount: '100' });
      expect(sim.isError, sim.content[0]?.text).toBeFalsy();
      expect(sim.structuredContent!.preview).toMatchObject({ kind: 'deposit', value_usd: '100' });
      await settledByMcp({ action: 'deposits', market: 'ETH', short_amount: '100' });
      const balances = await call('perp_v2_read', { action: 'balances', agent_id: mcpAgent });
      expect(BigInt(balances.structuredContent!.market_tokens[0].balance.raw)).toBeGreaterThan(0n);
      await settledByMcp({ action: 'withdrawals', market: 'ETH', amount: 'max' });
      const claim = await call('perp_v2_act', { action: 'claims', simulate: true, agent_id: mcpAgent });
      expect(claim.isError).toBe(true);
      expect(claim.content[0]!.text).toMatch(/nothing_to_claim/);
    } finally {
      await mcp.close();
    }
  });

  it('refuses what cannot work, each with its reason', async () => {
    const refusal = (action: string, body: Json) => c.refusal(client.protocols.simulate(SLUG, action, { agent_id: agent, ...body }));
    expect(await refusal('deposits', { market: 'ETH' })).toMatchObject({ status: 400, code: 'invalid_amount' });
    expect(await refusal('deposits', { market: 'ETH', short_amount: '1000000' })).toMatchObject({ status: 400, code: 'insufficient_balance' });
    // Past uint256 once in wei: refused as an amount (tokenUnits), never encoded into a call.
    expect(await refusal('deposits', { market: 'ETH', long_amount: `2${'0'.repeat(59)}` })).toMatchObject({ status: 400, code: 'invalid_amount' });
    expect(await refusal('deposits', { market: 'ETH', short_amount: '1.0000001' })).toMatchObject({ status: 400, code: 'invalid_amount' });
    expect(await refusal('deposits', { market: 'DOGE', short_amount: '10' })).toMatchObject({ status: 400, code: 'unknown_market' });
    expect(await refusal('deposits', { market: 'ETH', short_amount: '10', execution_fee: '1' })).toMatchObject({ status: 400, code: 'execution_fee_too_low' });
    // More GM than the pool gives: GMX's own execution, simulated, refuses it with its reason.
    const greedy = await refusal('deposits', { market: 'ETH', short_amount: '10', min_market_tokens: parseUnits('1000', 18).toString() });
    expect(greedy).toMatchObject({ status: 400, code: 'order_not_executable' });
    expect(greedy.body.protocol_error.name).toBe('MinMarketTokens');
    expect(await refusal('withdrawals', { market: 'ETH', amount: 'max' })).toMatchObject({ status: 400, code: 'nothing_to_withdraw' });
    expect(await refusal('withdrawals', { market: 'ETH', amount: '5' })).toMatchObject({ status: 400, code: 'insufficient_balance' });
    expect(await refusal('requests/cancel', { key: `0x${'ab'.repeat(32)}` })).toMatchObject({ status: 400, code: 'unknown_request' });
    expect(await refusal('requests/cancel', { key: '0x1234' })).toMatchObject({ status: 400 });
  });
});
