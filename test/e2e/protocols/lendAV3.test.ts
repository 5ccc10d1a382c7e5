/**
 * lend-a-v3 (Aave v3) end to end on the devnet's real Aave (the npm artifacts): every endpoint through the HTTP API,
 * the simulation's effects against what execution then does, every refusal with its reason (Aave's numeric codes
 * named), and a manual key's 402. The devnet's reserves: USDC (LTV 75 %, threshold 78 %) and WETH (80 %, 82.5 %),
 * priced 1 and 3000 USD (src/devnet/protocols/aaveV3/parameters.ts).
 */
import type { Address } from 'viem';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createClient, type AgentWalletClient } from '../../../src/client/index.ts';
import { familyCalls, fundTokens, payProtocolAction } from '../../support/protocols.ts';
import { startTestService, type TestService } from '../../support/service.ts';

const SLUG = 'lend-a-v3';
const CHAIN = 'ethereum';
const FUNDER = 4; // this file's funded account
type Json = Record<string, any>;

let svc: TestService;
let client: AgentWalletClient;
let c: ReturnType<typeof familyCalls>;
beforeAll(async () => {
  svc = await startTestService();
  client = createClient({ baseUrl: svc.url, apiKey: (await svc.newKey('sponsored')).apiKey, attempts: 1 });
  c = familyCalls(client, SLUG);
});
afterAll(async () => {
  await svc?.stop();
});

describe('lend-a-v3: Aave v3 on the devnet', () => {
  const agent = `aave-${Date.now()}`;
  const position = async () => (await c.get('position', { agent_id: agent })).position;
  beforeAll(async () => {
    const w = await client.wallet(agent, CHAIN);
    if (!w.ok) throw w.error;
    await fundTokens(svc.devnet, CHAIN, w.value.smart_wallet_address as Address, { WETH: '10', USDC: '2000' }, FUNDER);
  });

  it('balances: every reserve with the wallet’s balance, nothing supplied or owed yet, and the rates', async () => {
    const { reserves } = await c.get('balances', { agent_id: agent });
    expect(reserves.map((r: Json) => r.token.symbol).sort()).toEqual(['USDC', 'WETH']);
    expect(reserves.find((r: Json) => r.token.symbol === 'WETH')).toMatchObject({ wallet: { formatted: '10' }, supplied: { raw: '0' }, borrowed: { raw: '0' } });
    const aliased = await client.protocols.read<Json>('aave-v3', 'balances', { agent_id: agent });
    expect(aliased.ok && aliased.value.reserves.length).toBe(2);
  });

  it('supply: the simulation predicts the balances (token and aToken) and the capacity; the position then shows them', async () => {
    const sim = await c.simulate('supply', { agent_id: agent, token: 'WETH', amount: '5' });
    expect(sim.calls).toHaveLength(2);
    expect(sim.effects.balance_changes).toEqual([
      expect.objectContaining({ token: expect.objectContaining({ symbol: 'WETH' }), change: expect.objectContaining({ formatted: '-5' }) }),
      expect.objectContaining({ token: expect.objectContaining({ symbol: 'aEthWETH' }), change: expect.objectContaining({ formatted: '5' }) }),
    ]);
    expect(sim.effects.position_before).toMatchObject({ total_collateral_usd: '0', health_factor: null });
    expect(sim.effects.position_after).toMatchObject({ total_collateral_usd: '15000', available_borrows_usd: '12000', ltv: '0.8', liquidation_threshold: '0.825', health_factor: null });
    await c.execute('supply', { agent_id: agent, token: 'WETH', amount: '5' });
    const p = await position();
    expect(p).toMatchObject({ total_collateral_usd: '15000', supplied: [{ token: { symbol: 'WETH' }, amount: { formatted: '5' }, collateral: true }] });
    expect(p.borrow_capacity.find((b: Json) => b.token.symbol === 'USDC').amount.formatted).toBe('12000');
  });

  it('borrow: capacity falls and the health factor drops as the simulation predicted', async () => {
    const sim = await c.simulate('borrow', { agent_id: agent, token: 'USDC', amount: '1000' });
    expect(sim.effects.balance_changes).toEqual([
      expect.objectContaining({ token: expect.objectContaining({ symbol: 'USDC' }), change: expect.objectContaining({ formatted: '1000' }) }),
      expect.objectContaining({ token: expect.objectContaining({ symbol: 'variableDebtEthUSDC' }), change: expect.objectContaining({ formatted: '1000' }) }),
    ]);
    const predicted = sim.effects.position_after;
    expect(predicted).toMatchObject({ total_debt_usd: '1000', available_borrows_usd: '11000', health_factor: '12.375' }); // 15000 × 0.825 / 1000
    expect(predicted.liquidation_prices[0]).toMatchObject({ token: { symbol: 'WETH' }, price_usd: expect.stringMatching(/^242\.4242/) });
    await c.execute('borrow', { agent_id: agent, token: 'USDC', amount: '1000' });
    const after = await position();
    expect(Number(after.health_factor)).toBeCloseTo(12.375, 2);
    expect(Number(after.available_borrows_usd)).toBeCloseTo(11000, 0);
  });

  it('refuses a borrow beyond capacity with Aave’s numeric error named (36); nothing is queued', async () => {
    const beyond = await c.refusal(client.protocols.simulate(SLUG, 'borrow', { agent_id: agent, token: 'USDC', amount: '20000' }));
    expect(beyond).toMatchObject({ status: 400, code: 'simulation_failed' });
    expect(beyond.body.protocol_error).toMatchObject({ protocol: 'Aave v3', name: 'COLLATERAL_CANNOT_COVER_NEW_BORROW', code: '36' });
    const executed = await c.refusal(client.protocols.execute(SLUG, 'borrow', { agent_id: agent, token: 'USDC', amount: '20000' }));
    expect(executed.body).toMatchObject({ error: 'simulation_failed', protocol_error: { code: '36' } });
  });

  it('refuses bad input with a 400 naming the field', async () => {
    const cases: [string, Json, string, string][] = [
      ['supply', { agent_id: agent, token: 'WETH', amount: '500' }, 'insufficient_balance', 'amount'],
      ['supply', { agent_id: agent, token: 'DAI', amount: '1' }, 'unknown_token', 'token'],
      ['supply', { agent_id: agent, token: 'USDC', amount: '1', chain: 'base' }, 'unsupported_chain', 'chain'],
      ['supply', { agent_id: agent, token: 'USDC', amount: '0.0000001' }, 'invalid_amount', 'amount'],
      ['repay', { agent_id: agent, token: 'WETH', amount: '1' }, 'nothing_to_repay', 'token'],
      ['repay', { agent_id: agent, token: 'USDC', amount: '5000' }, 'amount_above_debt', 'amount'],
      ['withdraw', { agent_id: agent, token: 'USDC', amount: '1' }, 'nothing_to_withdraw', 'token'],
      ['withdraw', { agent_id: agent, token: 'WETH', amount: '6' }, 'amount_above_supplied', 'amount'],
    ];
    for (const [action, body, code, field] of cases) {
      const e = await c.refusal(client.protocols.simulate(SLUG, action, body));
      expect({ action, status: e.status, code: e.code, field: e.body.field }).toEqual({ action, status: 400, code, field });
    }
  });

  it('repay part, then max to exactly zero; withdraw everything with max', async () => {
    await c.execute('repay', { agent_id: agent, token: 'USDC', amount: '400' });
    expect(Number((await position()).total_debt_usd)).toBeCloseTo(600, 2);
    const sim = await c.simulate('repay', { agent_id: agent, token: 'USDC', amount: 'max' });
    expect(sim.calls).toHaveLength(3);
    await c.execute('repay', { agent_id: agent, token: 'USDC', amount: 'max' });
    expect(await position()).toMatchObject({ total_debt_usd: '0', borrowed: [], health_factor: null });
    await c.execute('withdraw', { agent_id: agent, token: 'WETH', amount: 'max' });
    expect(await position()).toMatchObject({ total_collateral_usd: '0', supplied: [] });
    const { reserves } = await c.get('balances', { agent_id: agent });
    expect(reserves.find((r: Json) => r.token.symbol === 'WETH').wallet.formatted).toBe('10');
  });

  it('under a manual key an action gets its 402 and confirms once paid, like any execute', async () => {
    const manual = createClient({ baseUrl: svc.url, apiKey: (await svc.newKey('manual')).apiKey, attempts: 1 });
    const payAgent = `${agent}-pays`;
    const w = await manual.wallet(payAgent, CHAIN);
    if (!w.ok) throw w.error;
    await fundTokens(svc.devnet, CHAIN, w.value.smart_wallet_address as Address, { USDC: '50' }, FUNDER);
    await payProtocolAction(svc.devnet, manual, SLUG, 'supply', { agent_id: payAgent, token: 'USDC', amount: '10' });
  });

  it('every endpoint is protected: 401 without a key', async () => {
    const anonymous = createClient({ baseUrl: svc.url, apiKey: undefined, attempts: 1 });
    for (const path of ['balances', 'position']) expect((await c.refusal(anonymous.protocols.read(SLUG, path))).status).toBe(401);
    for (const action of ['supply', 'withdraw', 'repay', 'borrow']) expect((await c.refusal(anonymous.protocols.simulate(SLUG, action, {}))).status).toBe(401);
  });
});
