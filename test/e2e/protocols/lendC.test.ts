/**
 * lend-c (Morpho Blue) end to end on the devnet's real Morpho: every endpoint through the HTTP API, the simulation's
 * effects against what execution then does, every refusal with its reason (Morpho's own messages decoded), and a
 * manual key's 402.
 */
import type { Address } from 'viem';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createClient, type AgentWalletClient } from '../../../src/client/index.ts';
import { familyCalls, fundTokens, payProtocolAction } from '../../support/protocols.ts';
import { startTestService, type TestService } from '../../support/service.ts';

const SLUG = 'lend-c';
const FUNDER = 3; // this file's funded account
type Json = Record<string, any>;

let svc: TestService;
let client: AgentWalletClient;
let c: ReturnType<typeof familyCalls>;
let market: Json; // the WETH/USDC market at 86 %
beforeAll(async () => {
  svc = await startTestService();
  client = createClient({ baseUrl: svc.url, apiKey: (await svc.newKey('sponsored')).apiKey, attempts: 1 });
  c = familyCalls(client, SLUG);
  market = (await c.get('markets')).markets.find((m: Json) => m.lltv === '0.86');
});
afterAll(async () => {
  await svc?.stop();
});

describe('lend-c: Morpho Blue on the devnet', () => {
  const agent = `morpho-${Date.now()}`;
  const position = async () => (await c.get('position', { agent_id: agent, market: market.id })).positions[0];
  beforeAll(async () => {
    const w = await client.wallet(agent, 'base');
    if (!w.ok) throw w.error;
    await fundTokens(svc.devnet, 'base', w.value.smart_wallet_address as Address, { WETH: '10', USDC: '2000' }, FUNDER);
  });

  it('markets and market: the pair, LLTV, oracle price; a market by id; the alias serves the same', async () => {
    const { markets } = await c.get('markets');
    expect(markets.map((m: Json) => [m.pair, m.lltv])).toEqual([['WETH/USDC', '0.86'], ['WETH/USDC', '0.945']]);
    expect(market).toMatchObject({ loan_token: { symbol: 'USDC' }, collateral_token: { symbol: 'WETH' }, oracle_price: { formatted: '3000' } });
    expect((await c.get('market', { market: market.id })).market.id).toBe(market.id);
    const aliased = await client.protocols.read<Json>('morpho-blue', 'market', { market: market.id });
    expect(aliased.ok && aliased.value.market.lltv).toBe('0.86');
  });

  it('supply collateral: the simulation predicts the balance and max borrow; the position then shows them', async () => {
    const sim = await c.simulate('supply-collateral', { agent_id: agent, market: market.id, amount: '5' });
    expect(sim.calls).toHaveLength(2);
    expect(sim.effects.balance_changes[0]).toMatchObject({ token: { symbol: 'WETH' }, change: { formatted: '-5' } });
    expect(sim.effects.position_after).toMatchObject({ collateral: { formatted: '5' }, collateral_value: { formatted: '15000' }, max_borrow: { formatted: '12900' }, health_factor: null });
    await c.execute('supply-collateral', { agent_id: agent, market: market.id, amount: '5' });
    expect(await position()).toMatchObject({ collateral: { formatted: '5' }, borrow_capacity: { formatted: '12900' } });
  });

  it('borrow: capacity falls and the health factor drops as the simulation predicted', async () => {
    const sim = await c.simulate('borrow', { agent_id: agent, market: market.id, amount: '1000' });
    const predicted = sim.effects.position_after;
    expect(sim.effects.balance_changes[0]).toMatchObject({ token: { symbol: 'USDC' }, change: { formatted: '1000' } });
    expect(predicted).toMatchObject({ health_factor: '12.9', borrow_capacity: { formatted: '11900' } }); // 15000 × 0.86 / 1000
    expect(predicted.liquidation_price.formatted).toMatch(/^232\.5581/); // 1000 / (5 × 0.86)
    await c.execute('borrow', { agent_id: agent, market: market.id, amount: '1000' });
    const after = await position();
    expect(Number(after.health_factor)).toBeCloseTo(12.9, 2);
    expect(Number(after.borrowed.formatted)).toBeCloseTo(1000, 3);
  });

  it('refuses a borrow beyond the LLTV with Morpho’s own error decoded; nothing is queued', async () => {
    const beyond = await c.refusal(client.protocols.simulate(SLUG, 'borrow', { agent_id: agent, market: market.id, amount: '20000' }));
    expect(beyond).toMatchObject({ status: 400, code: 'simulation_failed' });
    expect(beyond.body.protocol_error).toMatchObject({ protocol: 'Morpho Blue', name: 'INSUFFICIENT_COLLATERAL', code: 'insufficient collateral' });
    const executed = await c.refusal(client.protocols.execute(SLUG, 'borrow', { agent_id: agent, market: market.id, amount: '20000' }));
    expect(executed.body).toMatchObject({ error: 'simulation_failed', protocol_error: { name: 'INSUFFICIENT_COLLATERAL' } });
    const tooMuchOut = await c.refusal(client.protocols.simulate(SLUG, 'withdraw-collateral', { agent_id: agent, market: market.id, amount: '4.9' }));
    expect(tooMuchOut.body.protocol_error).toMatchObject({ name: 'INSUFFICIENT_COLLATERAL' });
  });

  it('refuses bad input with a 400 naming the field', async () => {
    const m = market.id;
    const cases: [string, Json, string, string][] = [
      ['supply', { agent_id: agent, market: 'WETH/USDC', amount: '1' }, 'ambiguous_market', 'market'], // two markets have that pair
      ['supply', { agent_id: agent, amount: '1' }, 'ambiguous_market', 'market'],
      ['supply', { agent_id: agent, market: `0x${'ab'.repeat(32)}`, amount: '1' }, 'unknown_market', 'market'],
      ['supply', { agent_id: agent, market: 'DAI/USDC', amount: '1' }, 'unknown_market', 'market'],
      ['supply', { agent_id: agent, market: 'nope', amount: '1' }, 'invalid_market', 'market'],
      ['supply-collateral', { agent_id: agent, market: m, amount: '500' }, 'insufficient_balance', 'amount'],
      ['supply', { agent_id: agent, market: m, amount: '1', chain: 'ethereum' }, 'unsupported_chain', 'chain'],
      ['withdraw', { agent_id: agent, market: m, amount: 'max' }, 'nothing_to_withdraw', 'amount'],
      ['repay', { agent_id: agent, market: m, amount: '5000' }, 'amount_above_debt', 'amount'],
      ['withdraw-collateral', { agent_id: agent, market: m, amount: '6' }, 'amount_above_supplied', 'amount'],
    ];
    for (const [action, body, code, field] of cases) {
      const e = await c.refusal(client.protocols.simulate(SLUG, action, body));
      expect({ action, status: e.status, code: e.code, field: e.body.field }).toEqual({ action, status: 400, code, field });
    }
  });

  it('repay part, then max by shares to exactly zero; withdraw all the collateral', async () => {
    await c.execute('repay', { agent_id: agent, market: market.id, amount: '400' });
    expect(Number((await position()).borrowed.formatted)).toBeCloseTo(600, 3);
    const sim = await c.simulate('repay', { agent_id: agent, market: market.id, amount: 'max' });
    expect(sim.calls).toHaveLength(3); // approve, repay(shares), approve(0)
    await c.execute('repay', { agent_id: agent, market: market.id, amount: 'max' });
    expect(await position()).toMatchObject({ borrow_shares: '0', borrowed: { raw: '0' }, health_factor: null });
    expect((await c.refusal(client.protocols.simulate(SLUG, 'repay', { agent_id: agent, market: market.id, amount: 'max' }))).code).toBe('nothing_to_repay');
    await c.execute('withdraw-collateral', { agent_id: agent, market: market.id, amount: 'max' });
    expect((await position()).collateral.raw).toBe('0');
  });

  it('supply the loan token and withdraw it all with max', async () => {
    await c.execute('supply', { agent_id: agent, market: market.id, amount: '100' });
    expect(Number((await position()).supplied.formatted)).toBeCloseTo(100, 3);
    await c.execute('withdraw', { agent_id: agent, market: market.id, amount: 'max' });
    expect((await position()).supply_shares).toBe('0');
    const { positions } = await c.get('position', { agent_id: agent }); // without market: only where it has a position
    expect(positions).toEqual([]);
  });

  it('under a manual key an action gets its 402 and confirms once paid, like any execute', async () => {
    const manual = createClient({ baseUrl: svc.url, apiKey: (await svc.newKey('manual')).apiKey, attempts: 1 });
    const payAgent = `${agent}-pays`;
    const w = await manual.wallet(payAgent, 'base');
    if (!w.ok) throw w.error;
    await fundTokens(svc.devnet, 'base', w.value.smart_wallet_address as Address, { WETH: '1' }, FUNDER);
    await payProtocolAction(svc.devnet, manual, SLUG, 'supply-collateral', { agent_id: payAgent, market: market.id, amount: '1' });
  });

  it('every endpoint is protected: 401 without a key', async () => {
    const anonymous = createClient({ baseUrl: svc.url, apiKey: undefined, attempts: 1 });
    for (const path of ['markets', 'market', 'position']) expect((await c.refusal(anonymous.protocols.read(SLUG, path))).status).toBe(401);
    for (const action of ['supply', 'withdraw', 'supply-collateral', 'withdraw-collateral', 'borrow', 'repay']) {
      expect((await c.refusal(anonymous.protocols.simulate(SLUG, action, {}))).status).toBe(401);
    }
  });
});
