/**
 * perp-v2 (GMX v2) end to end on the devnet's GMX (its contracts, keeper and price server): markets and balances, a
 * market long simulated (the preview, the effects, the bounds), opened, followed to the keeper's execution without
 * polling the chain (status.order, the webhook event), visible in positions with its figures, then closed; an order
 * the keeper cancels because the price moved past its acceptable price, with the reason; the refusals.
 */
import { join } from 'node:path';
import { Client } from '@modelcontextprotocol/client';
import { StdioClientTransport } from '@modelcontextprotocol/client/stdio';
import { erc20Abi, parseEther, type Address } from 'viem';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createClient, type AgentWalletClient } from '../../../src/client/index.ts';
import { keeperSettled, setGmxEthPrice, startEventCollector, type EventCollector } from '../../support/gmx.ts';
import { acquirePoolLock } from '../../support/poolLock.ts';
import { familyCalls, fundTokens } from '../../support/protocols.ts';
import { startTestService, type TestService } from '../../support/service.ts';
import { until } from '../../support/until.ts';
import { runCli } from '../../support/cli.ts';
import { tempDir } from '../../support/env.ts';

const SLUG = 'perp-v2';
const CHAIN = 'arbitrum';
const FUNDER = 0; // this file's funded account on arbitrum
type Json = Record<string, any>;

let svc: TestService;
let client: AgentWalletClient;
let c: ReturnType<typeof familyCalls>;
let release: () => void;
let hooks: EventCollector;

beforeAll(async () => {
  // Other files (the docs page, the cluster test) trade on the devnet's one GMX market and move its price feed.
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

describe('perp-v2: GMX v2 on the devnet', () => {
  const agent = `perp-${Date.now()}`;
  let wallet: Address;
  const chain = () => svc.devnet.publicClient(CHAIN);
  const usdc = () => svc.devnet.chain(CHAIN).tokens.find((t) => t.symbol === 'USDC')!.address;
  const usdcHeld = () => chain().readContract({ address: usdc(), abi: erc20Abi, functionName: 'balanceOf', args: [wallet] });
  const setEthPrice = (usd: string) => setGmxEthPrice(svc.devnet, usd);
  /** The request's record once its order is `state` (a limit order's wait ends at its creation: this goes on). */
  const orderIs = (id: string, ok: (o: Json) => boolean) =>
    until(`${id}'s order`, async () => {
      const s = await client.status(id);
      if (!s.ok) throw s.error;
      const o = s.value.order as Json | undefined;
      return o && ok(o) ? (s.value as Json) : undefined;
    }, 30_000, 50);
  /** Executes an order and waits until the keeper has settled it: the request's status as the API shows it then. */
  const settled = async (body: Json): Promise<Json> => {
    const r = await client.protocols.execute(SLUG, 'orders', { agent_id: agent, callback_url: hooks.url(), ...body });
    if (!r.ok) throw r.error;
    return keeperSettled(client, r.value.request_id);
  };

  beforeAll(async () => {
    await setEthPrice('3000');
    const w = await client.wallet(agent, CHAIN);
    if (!w.ok) throw w.error;
    wallet = w.value.smart_wallet_address as Address;
    await fundTokens(svc.devnet, CHAIN, wallet, { USDC: '5000' }, FUNDER);
    await svc.devnet.walletClient(CHAIN, FUNDER).sendTransactionSync({ to: wallet, value: parseEther('1') });
  });
  afterAll(() => setEthPrice('3000'));

  it('markets: the ETH/USD market with its tokens, prices, open interest, rates and fees; balances', async () => {
    const { markets } = await c.get('markets');
    expect(markets).toHaveLength(1);
    const m = markets[0];
    expect(m).toMatchObject({ name: 'ETH/USD [WETH-USDC]', index_token: { symbol: 'WETH', decimals: 18 }, long_token: { symbol: 'WETH' }, short_token: { symbol: 'USDC' }, disabled: false });
    expect(Number(m.index_price.min)).toBeCloseTo(3000, 6);
    expect(Number(m.max_leverage)).toBeGreaterThan(1);
    const b = await c.get('balances', { agent_id: agent });
    expect(b.balances.map((x: Json) => [x.token.symbol, x.balance.formatted])).toEqual([['ETH', '1'], ['WETH', '0'], ['USDC', '5000']]);
    expect(b.market_tokens).toEqual([{ market: m.market, name: m.name, balance: { raw: '0', decimals: 18, formatted: '0' } }]);
  });

  it('simulates a long: the preview of its fill, the execution fee and collateral leaving the wallet, the bounds', async () => {
    const sim = await c.simulate('orders', { agent_id: agent, type: 'market_increase', market: 'ETH', side: 'long', size_usd: '2000', collateral_token: 'USDC', collateral_amount: '400' });
    expect(Number(sim.preview.mark_price)).toBeCloseTo(3000, 6);
    // A long pays its impact: the expected price is above the mark, the acceptable one 0.5% above that.
    expect(Number(sim.preview.expected_price)).toBeGreaterThanOrEqual(3000);
    expect(Number(sim.preview.acceptable_price)).toBeCloseTo(Number(sim.preview.expected_price) * 1.005, 4);
    expect(Number(sim.preview.position_fee_usd)).toBeGreaterThan(0);
    expect(Number(sim.preview.position_after.leverage)).toBeGreaterThan(4);
    expect(Number(sim.preview.position_after.liquidation_price)).toBeLessThan(3000);
    expect(sim.bounds).toEqual({ acceptable_price: sim.preview.acceptable_price, execution_fee: sim.preview.execution_fee.raw });
    const changes = Object.fromEntries(sim.effects.balance_changes.map((b: Json) => [b.token.symbol, b.change.raw]));
    expect(changes.USDC).toBe((-400_000_000n).toString());
    expect(BigInt(changes.ETH)).toBe(-BigInt(sim.preview.execution_fee.raw));
  });

  let opened: Json;
  it('opens the long: confirmed once created, then executed by the keeper with its fill price, told by a webhook event', async () => {
    const before = await usdcHeld();
    opened = await settled({ type: 'market_increase', market: 'ETH', side: 'long', size_usd: '2000', collateral_token: 'USDC', collateral_amount: '400' });
    expect(opened.status).toBe('confirmed');
    expect(opened.order).toMatchObject({ state: 'executed', reason: null });
    expect(opened.order.key).toMatch(/^0x[0-9a-f]{64}$/);
    expect(Number(opened.order.fill_price)).toBeGreaterThanOrEqual(3000);
    expect(Number(opened.order.fill_price)).toBeLessThanOrEqual(Number(opened.action.input.acceptable_price));
    expect(before - (await usdcHeld())).toBe(400_000_000n);
    // The execution's own event, after the confirmation's: the same request, ids in order.
    const events = await hooks.eventsOf(opened.request_id, 2);
    expect(events.map((e) => [e.id, e.type])).toEqual([
      [`evt_${opened.request_id}`, 'execution.confirmed'],
      [`evt_${opened.request_id}_2`, 'perp.order_executed'],
    ]);
    expect(events[1]!.data.order).toEqual(opened.order);
  });

  it('positions: the long with its size, collateral, entry price, PnL, fees and liquidation price', async () => {
    const { positions } = await c.get('positions', { agent_id: agent });
    expect(positions).toHaveLength(1);
    const p = positions[0];
    expect(p).toMatchObject({ side: 'long', market_name: 'ETH/USD [WETH-USDC]', collateral_token: { symbol: 'USDC' }, size_usd: '2000' });
    expect(Number(p.entry_price)).toBeCloseTo(Number(opened.order.fill_price), 6);
    expect(Number(p.collateral_usd)).toBeLessThan(400); // the position fee came out of it
    expect(Number(p.collateral_usd)).toBeGreaterThan(395);
    expect(Number(p.liquidation_price)).toBeGreaterThan(2000);
    expect(Number(p.liquidation_price)).toBeLessThan(3000);
    expect(Number(p.leverage)).toBeGreaterThan(5);
    expect(Number(p.closing_fee_usd)).toBeGreaterThan(0);
    // Borrowing and funding (the longs pay: they are all the open interest) accrue by the second of chain time: a
    // devnet chain's clock moves with its blocks, so one is mined after a while.
    await new Promise((r) => setTimeout(r, 2_000));
    await svc.devnet.walletClient(CHAIN, FUNDER).sendTransactionSync({ to: svc.devnet.walletClient(CHAIN, FUNDER).account.address, value: 0n });
    const later = (await c.get('positions', { agent_id: agent })).positions[0];
    expect(Number(later.pending_fees_usd.borrowing)).toBeGreaterThan(0);
    expect(Number(later.pending_fees_usd.funding)).toBeGreaterThan(0);
    expect(Number(later.net_value_usd)).toBeLessThan(Number(p.net_value_usd));
    expect((await c.get('orders', { agent_id: agent })).orders).toEqual([]);
  });

  it('an order the keeper cancels: the price moves past its acceptable price before execution; the reason on the status and in its event', async () => {
    // The keeper acts a second after it sees an order: the price is moved as soon as the order exists. Should the
    // keeper win that race on a loaded machine, the order executes; the long is then closed and it is tried again.
    let cancelled: Json | undefined;
    for (let attempt = 0; attempt < 3 && !cancelled; attempt++) {
      await setEthPrice('3000');
      const r = await client.protocols.execute(SLUG, 'orders', { agent_id: agent, callback_url: hooks.url(), type: 'market_increase', market: 'ETH', side: 'long', size_usd: '1000', collateral_token: 'USDC', collateral_amount: '200', slippage_bps: 10 });
      if (!r.ok) throw r.error;
      const id = r.value.request_id;
      await until('the order to exist', async () => ((await c.get('orders', { agent_id: agent })).orders.length > 0 ? true : undefined), 20_000, 20).catch(() => undefined);
      await setEthPrice('3100');
      const s = await keeperSettled(client, id);
      if (s.order.state === 'cancelled') cancelled = s;
    }
    expect(cancelled, 'the keeper cancelled one of three orders').toBeDefined();
    expect(cancelled!.status).toBe('confirmed');
    expect(cancelled!.order).toMatchObject({ state: 'cancelled', fill_price: null, reason: 'OrderNotFulfillableAtAcceptablePrice' });
    const events = await hooks.eventsOf(cancelled!.request_id, 2);
    expect(events.map((e) => e.type)).toEqual(['execution.confirmed', 'perp.order_cancelled']);
    expect(events[1]!.data.order.reason).toBe('OrderNotFulfillableAtAcceptablePrice');
    await setEthPrice('3000');
  });

  it('closes the long with size_usd max: executed, the collateral and PnL back in USDC, no position left', async () => {
    // What a close returns is the position's net value now (the keeper's race above may have added to the long).
    const [position] = (await c.get('positions', { agent_id: agent })).positions;
    const netValue = Number(position.net_value_usd);
    const before = await usdcHeld();
    const closed = await settled({ type: 'market_decrease', market: 'ETH', side: 'long', size_usd: 'max', collateral_token: 'USDC' });
    expect(closed.order.state).toBe('executed');
    expect((await c.get('positions', { agent_id: agent })).positions).toEqual([]);
    const back = Number((await usdcHeld()) - before) / 1e6;
    expect(back).toBeGreaterThan(netValue * 0.98);
    expect(back).toBeLessThan(netValue * 1.02);
  });

  it('a limit long waits for its trigger; updated, it executes when the price reaches it; another, cancelled by the agent, gives everything back', async () => {
    const limit = await client.protocols.execute(SLUG, 'orders', { agent_id: agent, callback_url: hooks.url(), type: 'limit_increase', market: 'ETH', side: 'long', size_usd: '600', collateral_token: 'USDC', collateral_amount: '120', trigger_price: '2900' });
    if (!limit.ok) throw limit.error;
    // A limit order's wait ends at its creation (it settles at its trigger, not at the next price).
    const waited = await client.waitForTerminal(limit.value.request_id, { minIntervalMs: 50, maxIntervalMs: 100, timeoutMs: 30_000 });
    if (!waited.ok) throw waited.error;
    expect(waited.value).toMatchObject({ status: 'confirmed', order: { state: 'pending', settles: 'at_trigger' } });
    const created = await orderIs(limit.value.request_id, (o) => o.key !== null);
    const key = created.order.key as string;
    const pending = (await c.get('orders', { agent_id: agent })).orders;
    expect(pending).toMatchObject([{ key, type: 'limit_increase', side: 'long', size_usd: '600', trigger_price: '2900', frozen: false }]);

    await c.execute('orders/update', { agent_id: agent, key, trigger_price: '2950' });
    expect((await c.get('orders', { agent_id: agent })).orders).toMatchObject([{ key, trigger_price: '2950' }]);
    await setEthPrice('2940');
    const executed = await orderIs(limit.value.request_id, (o) => o.state !== 'pending');
    expect(executed.order).toMatchObject({ key, state: 'executed' });
    expect(Number(executed.order.fill_price)).toBeCloseTo(2940, 0);
    expect((await c.get('positions', { agent_id: agent })).positions.map((p: Json) => [p.side, p.size_usd])).toEqual([['long', '600']]);
    await setEthPrice('3000');
    const closed = await settled({ type: 'market_decrease', market: 'ETH', side: 'long', size_usd: 'max', collateral_token: 'USDC' });
    expect(closed.order.state).toBe('executed');

    const before = await usdcHeld();
    const far = await client.protocols.execute(SLUG, 'orders', { agent_id: agent, type: 'limit_increase', market: 'ETH', side: 'long', size_usd: '500', collateral_token: 'USDC', collateral_amount: '100', trigger_price: '2000' });
    if (!far.ok) throw far.error;
    const farKey = (await orderIs(far.value.request_id, (o) => o.key !== null)).order.key as string;
    expect(before - (await usdcHeld())).toBe(100_000_000n);
    await c.execute('orders/cancel', { agent_id: agent, key: farKey });
    const cancelled = await orderIs(far.value.request_id, (o) => o.state !== 'pending');
    expect(cancelled.order).toMatchObject({ key: farKey, state: 'cancelled', reason: 'USER_INITIATED_CANCEL' });
    expect(await usdcHeld()).toBe(before);
    expect((await c.get('orders', { agent_id: agent })).orders).toEqual([]);

    // Nobody changes or cancels an order that is not theirs, nor one that is gone.
    expect(await c.refusal(client.protocols.simulate(SLUG, 'orders/cancel', { agent_id: agent, key: farKey }))).toMatchObject({ status: 400, code: 'unknown_order' });
    expect(await c.refusal(client.protocols.simulate(SLUG, 'orders/update', { agent_id: `${agent}-other`, key, trigger_price: '1' }))).toMatchObject({ status: 400, code: 'unknown_order' });
  });

  it('refuses what cannot work, each with its reason', async () => {
    const order = (extra: Json) => client.protocols.simulate(SLUG, 'orders', { agent_id: agent, type: 'market_increase', market: 'ETH', side: 'long', size_usd: '1000', collateral_token: 'USDC', collateral_amount: '100', ...extra });
    // Nothing to decrease.
    expect(await c.refusal(client.protocols.simulate(SLUG, 'orders', { agent_id: agent, type: 'market_decrease', market: 'ETH', side: 'short', size_usd: '10', collateral_token: 'USDC' }))).toMatchObject({ status: 400, code: 'unknown_position' });
    // An acceptable price the market is already past: GMX's simulated execution says so.
    const past = await c.refusal(order({ acceptable_price: '2500' }));
    expect(past).toMatchObject({ status: 400, code: 'order_not_executable' });
    expect(past.body.protocol_error.name).toBe('OrderNotFulfillableAtAcceptablePrice');
    // Too little collateral for the size: GMX's own check.
    expect((await c.refusal(order({ size_usd: '100000', collateral_amount: '10' }))).body.protocol_error.name).toMatch(/InsufficientCollateral|InsufficientReserve|MaxOpenInterest/);
    expect(await c.refusal(order({ collateral_amount: '999999' }))).toMatchObject({ status: 400, code: 'insufficient_balance' });
    expect(await c.refusal(order({ execution_fee: '1' }))).toMatchObject({ status: 400, code: 'execution_fee_too_low' });
    expect(await c.refusal(order({ market: 'BTC' }))).toMatchObject({ status: 400, code: 'unknown_market' });
    expect(await c.refusal(order({ collateral_token: 'USDT' }))).toMatchObject({ status: 400, code: 'unknown_token' });
    expect(await c.refusal(order({ collateral_amount: undefined }))).toMatchObject({ status: 400, code: 'invalid_amount' });
    expect(await c.refusal(order({ size_usd: 'max' }))).toMatchObject({ status: 400, code: 'invalid_amount' });
    expect(await c.refusal(order({ slippage_bps: 900 }))).toMatchObject({ status: 400, code: 'invalid_slippage' });
    expect(await c.refusal(order({ side: 'up' }))).toMatchObject({ status: 400, code: 'invalid_side' });
    expect(await c.refusal(order({ type: 'limit_increase' }))).toMatchObject({ status: 400, code: 'invalid_price' });
    expect(await c.refusal(order({ trigger_price: '2900' }))).toMatchObject({ status: 400, code: 'invalid_price' });
  });

  it('the CLI commands and the MCP tools, generated from the registry: markets, a simulated order, an order followed to execution, list-orders', { timeout: 180_000 }, async () => {
    const apiKey = (await svc.newKey('sponsored')).apiKey;
    const cliAgent = `${agent}-cli`;
    const env = { AGENT_WALLET_API_KEY: apiKey, AGENT_WALLET_BASE_URL: svc.url, AGENT_WALLET_JOURNAL: join(tempDir('aw-perp-'), 'j.jsonl') };
    const w = await createClient({ baseUrl: svc.url, apiKey }).wallet(cliAgent, CHAIN);
    if (!w.ok) throw w.error;
    await fundTokens(svc.devnet, CHAIN, w.value.smart_wallet_address as Address, { USDC: '500' }, FUNDER);
    await svc.devnet.walletClient(CHAIN, FUNDER).sendTransactionSync({ to: w.value.smart_wallet_address as Address, value: parseEther('0.1') });

    const m = await runCli(['perp-v2', 'markets', '--json'], env);
    expect(m.code, m.stderr).toBe(0);
    expect(JSON.parse(m.stdout).markets[0].name).toBe('ETH/USD [WETH-USDC]');
    const open = await runCli(['gmx-v2', 'orders', '--agent-id', cliAgent, '--type', 'market_increase', '--market', 'ETH', '--side', 'short', '--size-usd', '300', '--collateral-token', 'USDC', '--collateral-amount', '100', '--wait'], env);
    expect(open.code, open.stderr).toBe(0);
    // --wait goes on past `confirmed` until the keeper has acted, and says what it did.
    expect(open.stdout).toMatch(/confirmed \(order executed\)/);
    expect(open.stdout).toMatch(/order\s+executed at [0-9.]+/);
    const listed = await runCli(['perp-v2', 'list-orders', '--agent-id', cliAgent, '--json'], env);
    expect(listed.code, listed.stderr).toBe(0);
    expect(JSON.parse(listed.stdout).orders).toEqual([]);

    const mcp = new Client({ name: 'perp-v2-test', version: '1.0.0' });
    const clean = Object.fromEntries(Object.entries(process.env).filter((e): e is [string, string] => e[1] !== undefined && !e[0].startsWith('AGENT_WALLET_')));
    await mcp.connect(new StdioClientTransport({ command: process.execPath, args: ['bin/agent-wallet.js', 'mcp'], env: { ...clean, ...env }, stderr: 'pipe' }));
    try {
      const call = async (name: string, args: Json) => (await mcp.callTool({ name, arguments: args })) as { isError?: boolean; structuredContent?: Json; content: { text: string }[] };
      const positions = await call('perp_v2_read', { action: 'positions', agent_id: cliAgent });
      expect(positions.isError, positions.content[0]?.text).toBeFalsy();
      expect(positions.structuredContent!.positions.map((p: Json) => [p.side, p.size_usd])).toEqual([['short', '300']]);
      const sim = await call('perp_v2_act', { action: 'orders', simulate: true, agent_id: cliAgent, type: 'market_decrease', market: 'ETH', side: 'short', size_usd: 'max', collateral_token: 'USDC' });
      expect(sim.isError, sim.content[0]?.text).toBeFalsy();
      expect(sim.structuredContent!.preview).toMatchObject({ size_delta_usd: '300', position_after: null });
      const closed = await call('perp_v2_act', { action: 'orders', agent_id: cliAgent, type: 'market_decrease', market: 'ETH', side: 'short', size_usd: 'max', collateral_token: 'USDC' });
      expect(closed.isError, closed.content[0]?.text).toBeFalsy();
      const settledStatus = await until('the close to be settled', async () => {
        const st = await call('get_status', { request_id: closed.structuredContent!.request_id, wait_seconds: 10 });
        return (st.structuredContent as Json | undefined)?.order?.state === 'executed' ? st : undefined;
      }, 60_000);
      expect(settledStatus.structuredContent!.status).toBe('confirmed');
    } finally {
      await mcp.close();
    }
  });
});
