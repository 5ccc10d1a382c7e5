/**
 * pool-a-v3 (Uniswap v3) swaps end to end on the devnet's real v3 contracts: each quote against what the swap then
 * does to the wallet's balances, read from the chain (not from the service's effects); exact input and output,
 * one pool and a named route, native ETH in and out; every refusal with its reason (the router's own, decoded).
 * This file swaps in the USDC/WETH 500 and USDC/USDT 3000 pools only (the liquidity test and the docs use the
 * USDC/WETH 3000 pool), so no other test moves a price between a quote here and its swap.
 */
import { join } from 'node:path';
import { Client } from '@modelcontextprotocol/client';
import { StdioClientTransport } from '@modelcontextprotocol/client/stdio';
import { erc20Abi, parseEther, parseUnits, type Address } from 'viem';
import { afterAll, afterEach, beforeAll, beforeEach, describe, expect, it } from 'vitest';
import { API_VERSION } from '../../../src/api/v1alpha1/index.ts';
import { createClient, type AgentWalletClient } from '../../../src/client/index.ts';
import type { ChainName } from '../../../src/config/chains.ts';
import { swapRouter02Abi } from '../../../src/protocols/uniswapV3/abi.ts';
import { runCli } from '../../support/cli.ts';
import { tempDir } from '../../support/env.ts';
import { familyCalls } from '../../support/protocols.ts';
import { newPayer } from '../../support/payer.ts';
import { startTestService, type TestService } from '../../support/service.ts';
import { holdPoolLockPerTest } from '../../support/poolLock.ts';

const SLUG = 'pool-a-v3';
type Json = Record<string, any>;


// Each test quotes and trades in the devnet's shared Uniswap pools: no other file trades there meanwhile.
holdPoolLockPerTest({ beforeEach, afterEach });
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

const token = (symbol: string): Address => svc.devnet.chain('ethereum').tokens.find((t) => t.symbol === symbol)!.address;

/** The wallet's holdings read from the chain itself: native ETH and each token. */
async function holdings(wallet: Address): Promise<Record<string, bigint>> {
  const chain = svc.devnet.publicClient('ethereum');
  const out: Record<string, bigint> = { ETH: await chain.getBalance({ address: wallet }) };
  for (const s of ['USDC', 'USDT', 'WETH']) out[s] = await chain.readContract({ address: token(s), abi: erc20Abi, functionName: 'balanceOf', args: [wallet] });
  return out;
}

const quote = (body: Json): Promise<Json> => c.compute('swap/quote', body);

describe('pool-a-v3: Uniswap v3 swaps on the devnet', () => {
  const agent = `uni3-${Date.now()}`;
  let wallet: Address;
  beforeAll(async () => {
    const w = await client.wallet(agent, 'ethereum');
    if (!w.ok) throw w.error;
    wallet = w.value.smart_wallet_address as Address;
    const payer = await newPayer(svc.devnet, 'ethereum');
    await payer.mint('USDC', wallet, parseUnits('20000', 6));
    await payer.mint('WETH', wallet, parseEther('5'));
    await svc.devnet.publicClient('ethereum').request({ method: 'anvil_setBalance', params: [wallet, '0x4563918244f40000'] } as never); // 5 ETH
  });

  it('pools and pool: the four listed pools at 3000 USDC per WETH and 1:1, one by pair and fee; the alias serves the same', async () => {
    const { pools } = await c.get('pools');
    expect(pools.map((p: Json) => `${p.token0.symbol}/${p.token1.symbol} ${p.fee}`).sort()).toEqual(['USDC/USDT 3000', 'USDC/USDT 500', 'USDC/WETH 3000', 'USDC/WETH 500']);
    const weth = pools.find((p: Json) => p.token1.symbol === 'WETH' && p.fee === 500);
    expect(Number(weth.price.token0_per_token1)).toBeCloseTo(3000, 0);
    expect((await c.get('pool', { pool: 'WETH/USDC', fee: '500' })).pool.address).toBe(weth.address);
    expect((await c.get('pool', { pool: weth.address })).pool.fee).toBe(500);
    const aliased = await client.protocols.read<Json>('uniswap-v3', 'pools', { token_a: 'usdt', token_b: 'USDC' });
    expect(aliased.ok && aliased.value.pools).toHaveLength(2);
  });

  const swapsAsQuoted = [
    { name: 'exact input, one pool', body: { token_in: 'WETH', token_out: 'USDC', amount_in: '1', fee: 500 }, paid: 'WETH', got: 'USDC' },
    { name: 'exact output, one pool', body: { token_in: 'USDC', token_out: 'WETH', amount_out: '0.5', fee: 500 }, paid: 'USDC', got: 'WETH' },
    { name: 'exact input, two hops from native ETH', body: { token_in: 'ETH', token_out: 'USDT', amount_in: '0.2', route: 'WETH,500,USDC,3000,USDT' }, paid: 'ETH', got: 'USDT' },
    { name: 'exact output to native ETH', body: { token_in: 'USDC', token_out: 'ETH', amount_out: '0.1', fee: 500 }, paid: 'USDC', got: 'ETH' },
    { name: 'exact output, two hops, from native ETH', body: { token_in: 'ETH', token_out: 'USDT', amount_out: '100', route: 'WETH,500,USDC,3000,USDT' }, paid: 'ETH', got: 'USDT' },
  ];
  for (const s of swapsAsQuoted) {
    it(`${s.name}: the quote is what the swap does to the wallet, read from the chain`, async () => {
      const q = await quote(s.body);
      const before = await holdings(wallet);
      const done = await c.execute('swap', { agent_id: agent, ...s.body });
      const after = await holdings(wallet);
      // Sponsored: the paymaster pays the gas, so even native ETH moves by the swap alone.
      expect(before[s.paid]! - after[s.paid]!).toBe(BigInt(q.amount_in.raw));
      expect(after[s.got]! - before[s.got]!).toBe(BigInt(q.amount_out.raw));
      // The bound the request was held to, stored on it: the quote less (or plus) the default 50 bps.
      const bound = s.body.amount_in !== undefined ? done.action!.input.amount_out_minimum : done.action!.input.amount_in_maximum;
      expect(bound).toBe(s.body.amount_in !== undefined ? q.minimum_received.raw : q.maximum_paid.raw);
    });
  }

  it('simulate shows the balance changes, the minimum received and the deadline it would be held to', async () => {
    const sim = await c.simulate('swap', { agent_id: agent, token_in: 'USDC', token_out: 'ETH', amount_in: '300', fee: 500, slippage_bps: 100 });
    const q = await quote({ token_in: 'USDC', token_out: 'ETH', amount_in: '300', fee: 500, slippage_bps: 100 });
    expect(sim.effects.balance_changes.map((b: Json) => [b.token.symbol, b.change.raw])).toEqual([
      ['USDC', '-300000000'],
      ['ETH', q.amount_out.raw],
    ]);
    expect(sim.bounds.amount_out_minimum).toBe(q.minimum_received.raw);
    expect(sim.bounds.deadline).toBeGreaterThan(Math.floor(Date.now() / 1000) - 3600);
    expect(sim.calls).toHaveLength(2); // the exact approval, then the router's multicall
  });

  it('refuses a swap past its bounds with the router’s own reason: too little received, too much requested, an expired deadline', async () => {
    const q = await quote({ token_in: 'WETH', token_out: 'USDC', amount_in: '0.1', fee: 500 });
    const tooLittle = await c.refusal(client.protocols.simulate(SLUG, 'swap', { agent_id: agent, token_in: 'WETH', token_out: 'USDC', amount_in: '0.1', fee: 500, amount_out_minimum: (BigInt(q.amount_out.raw) + 1n).toString() }));
    expect(tooLittle).toMatchObject({ status: 400, code: 'simulation_failed' });
    expect(tooLittle.body.protocol_error).toMatchObject({ protocol: 'Uniswap v3', name: 'TooLittleReceived' });
    // Exact output approves only the maximum, so a dearer swap would fail on the transfer first: refused before, plainly.
    const tooMuch = await c.refusal(client.protocols.execute(SLUG, 'swap', { agent_id: agent, token_in: 'USDC', token_out: 'WETH', amount_out: '0.1', fee: 500, amount_in_maximum: '100000000' }));
    expect(tooMuch.body).toMatchObject({ error: 'slippage_exceeded', field: 'amount_in_maximum', amount_in_maximum: '100000000' });
    const expired = await c.refusal(client.protocols.simulate(SLUG, 'swap', { agent_id: agent, token_in: 'WETH', token_out: 'USDC', amount_in: '0.1', deadline: 1_000 }));
    expect(expired.body.protocol_error).toMatchObject({ name: 'TransactionTooOld', message: 'the deadline has passed' });
  });

  it('refuses a price impact over the bound, a slippage past the maximum, and what no pool offers, naming the field', async () => {
    const impact = await c.refusal(client.protocols.simulate(SLUG, 'swap', { agent_id: agent, token_in: 'WETH', token_out: 'USDC', amount_in: '1', fee: 500, max_price_impact_bps: 0 }));
    expect(impact).toMatchObject({ status: 400, code: 'price_impact_too_high' });
    expect(impact.body).toMatchObject({ field: 'max_price_impact_bps', max_price_impact_bps: 0 });
    const slippage = await c.refusal(client.protocols.simulate(SLUG, 'swap', { agent_id: agent, token_in: 'WETH', token_out: 'USDC', amount_in: '1', slippage_bps: 501 }));
    expect(slippage).toMatchObject({ status: 400, code: 'invalid_slippage' });
    const noPool = await c.refusal(client.protocols.simulate(SLUG, 'swap', { agent_id: agent, token_in: 'WETH', token_out: 'USDT', amount_in: '1' }));
    expect(noPool).toMatchObject({ status: 400, code: 'unknown_pool' });
    const fee = await c.refusal(client.protocols.compute(SLUG, 'swap/quote', { token_in: 'WETH', token_out: 'USDC', amount_in: '1', fee: 10000 }));
    expect(fee.body).toMatchObject({ error: 'unknown_pool', field: 'fee' });
    const route = await c.refusal(client.protocols.compute(SLUG, 'swap/quote', { token_in: 'WETH', token_out: 'USDT', amount_in: '1', route: 'WETH,500,USDT' }));
    expect(route.body).toMatchObject({ error: 'invalid_route', field: 'route' });
    const same = await c.refusal(client.protocols.compute(SLUG, 'swap/quote', { token_in: 'ETH', token_out: 'WETH', amount_in: '1' }));
    expect(same.body).toMatchObject({ error: 'same_token' });
    const both = await c.refusal(client.protocols.compute(SLUG, 'swap/quote', { token_in: 'WETH', token_out: 'USDC', amount_in: '1', amount_out: '1' }));
    expect(both.status).toBe(400);
    const poor = await c.refusal(client.protocols.simulate(SLUG, 'swap', { agent_id: agent, token_in: 'USDT', token_out: 'USDC', amount_in: '50000' }));
    expect(poor.body).toMatchObject({ error: 'insufficient_balance', field: 'amount_in' });
    const unknown = await c.refusal(client.protocols.compute(SLUG, 'swap/quote', { token_in: 'DOGE', token_out: 'USDC', amount_in: '1' }));
    expect(unknown.body).toMatchObject({ error: 'unknown_token', field: 'token_in' });
  });

  it('balances: native ETH and every pool token, as the chain has them', async () => {
    const b = await c.get('balances', { agent_id: agent });
    const chain = await holdings(wallet);
    expect(Object.fromEntries(b.balances.map((x: Json) => [x.token.symbol, BigInt(x.balance.raw)]))).toEqual(chain);
  });

  it('the family’s CLI commands and MCP tools, generated from the registry, quote, swap and add liquidity', { timeout: 180_000 }, async () => {
    const apiKey = (await svc.newKey('sponsored')).apiKey;
    const cliAgent = `${agent}-cli`;
    const env = { AGENT_WALLET_API_KEY: apiKey, AGENT_WALLET_BASE_URL: svc.url, AGENT_WALLET_JOURNAL: join(tempDir('aw-uni3-'), 'j.jsonl') };
    const w = await createClient({ baseUrl: svc.url, apiKey }).wallet(cliAgent, 'ethereum');
    if (!w.ok) throw w.error;
    const funder = await newPayer(svc.devnet, 'ethereum');
    await funder.mint('USDC', w.value.smart_wallet_address as Address, parseUnits('5000', 6));

    const quoted = await runCli(['pool-a-v3', 'swap/quote', '--token-in', 'USDC', '--token-out', 'WETH', '--amount-in', '300', '--fee', '500', '--json'], env);
    expect(quoted.code, quoted.stderr).toBe(0);
    const q = JSON.parse(quoted.stdout);
    expect(q).toMatchObject({ side: 'exact_in', route: [{ fee: 500 }], minimum_received: { decimals: 18 } });
    const swapped = await runCli(['uniswap-v3', 'swap', '--agent-id', cliAgent, '--token-in', 'USDC', '--token-out', 'WETH', '--amount-in', '300', '--fee', '500', '--slippage-bps', '30', '--wait'], env);
    expect(swapped.code, swapped.stderr).toBe(0);
    expect(swapped.stdout).toMatch(/status\s+confirmed/);
    const bad = await runCli(['pool-a-v3', 'swap', '--agent-id', cliAgent, '--token-in', 'USDC', '--token-out', 'WETH', '--amount-in', '1', '--slippage-bps', '900', '--json'], env);
    expect(bad.code).toBe(3);
    expect(JSON.parse(bad.stdout)).toMatchObject({ error: 'invalid_slippage', field: 'slippage_bps' });

    const mcp = new Client({ name: 'pool-a-v3-test', version: '1.0.0' });
    const clean = Object.fromEntries(Object.entries(process.env).filter((e): e is [string, string] => e[1] !== undefined && !e[0].startsWith('AGENT_WALLET_')));
    await mcp.connect(new StdioClientTransport({ command: process.execPath, args: ['bin/agent-wallet.js', 'mcp'], env: { ...clean, ...env }, stderr: 'pipe' }));
    try {
      const call = async (name: string, args: Json) => (await mcp.callTool({ name, arguments: args })) as { isError?: boolean; structuredContent?: Json; content: { text: string }[] };
      const quote = await call('pool_a_v3_read', { action: 'swap/quote', token_in: 'WETH', token_out: 'USDC', amount_in: '0.05', fee: 500 });
      expect(quote.isError, quote.content[0]?.text).toBeFalsy();
      expect(quote.structuredContent).toMatchObject({ side: 'exact_in', token_out: { symbol: 'USDC' } });
      const sim = await call('pool_a_v3_act', { action: 'swap', agent_id: cliAgent, token_in: 'WETH', token_out: 'USDC', amount_in: '0.05', fee: 500, simulate: true });
      expect(sim.isError, sim.content[0]?.text).toBeFalsy();
      expect(sim.structuredContent!.effects.balance_changes.map((b: Json) => b.token.symbol)).toEqual(['WETH', 'USDC']);
      const add = await call('pool_a_v3_act', { action: 'liquidity/add', agent_id: cliAgent, pool: 'USDC/WETH', fee: 3000, amount0: '200', simulate: true });
      expect(add.isError, add.content[0]?.text).toBeFalsy();
      expect(add.structuredContent!.effects.position_after).toMatchObject({ fee: 3000, full_range: true });
      const route = await call('pool_a_v3_read', { action: 'swap/quote', token_in: 'WETH', token_out: 'USDT', amount_in: '1', route: 'WETH,500,USDT' });
      expect(route.isError).toBe(true);
      expect(route.structuredContent).toMatchObject({ error: 'invalid_route', field: 'route', http_status: 400 });
    } finally {
      await mcp.close();
    }
  });

  describe('a manual key: the price moves between the 402 and the paid resend', () => {
    let manual: AgentWalletClient;
    const payer = `uni3-paid-${Date.now()}`;
    let payerWallet: Address;
    beforeAll(async () => {
      manual = createClient({ baseUrl: svc.url, apiKey: (await svc.newKey('manual')).apiKey, attempts: 1 });
      const w = await manual.wallet(payer, 'ethereum');
      if (!w.ok) throw w.error;
      payerWallet = w.value.smart_wallet_address as Address;
      const funder = await newPayer(svc.devnet, 'ethereum');
      await funder.mint('USDT', payerWallet, parseUnits('1000', 6));
    });

    /**
     * Someone else sells `usdt` USDT into the USDC/USDT 0.3% pool straight through the router: USDT gets cheaper. That
     * pool is this file's alone (no other test, docs page or devnet check relies on its price).
     */
    async function moveThePrice(usdt: string): Promise<void> {
      const mover = await newPayer(svc.devnet, 'ethereum');
      const router = svc.devnet.chain('ethereum').protocols!.uniswapV3!.swapRouter02;
      const amount = parseUnits(usdt, 6);
      await mover.mint('USDT', mover.address, amount);
      await mover.wallet.writeContractSync({ address: token('USDT'), abi: erc20Abi, functionName: 'approve', args: [router, amount] });
      const single = { tokenIn: token('USDT'), tokenOut: token('USDC'), fee: 3000, recipient: mover.address, amountIn: amount, amountOutMinimum: 0n, sqrtPriceLimitX96: 0n };
      await mover.wallet.writeContractSync({ address: router, abi: swapRouter02Abi, functionName: 'exactInputSingle', args: [single] });
    }

    /** The 402 (the first plan fixes the bounds), `between` it and the payment, then the paid resend to its end. */
    async function paidAfter(between: () => Promise<void>) {
      const body = { agent_id: payer, token_in: 'USDT', token_out: 'USDC', amount_in: '100', fee: 3000 };
      const first = await manual.protocols.execute(SLUG, 'swap', body);
      if (first.ok || first.error.status !== 402) throw new Error(`expected 402, got ${first.ok ? 200 : first.error.status}`);
      const q = first.error.payment!;
      await between();
      const usdcBefore = (await holdings(payerWallet)).USDC!;
      const paying = await newPayer(svc.devnet, q.chain as ChainName);
      const tx = await paying.pay('USDC', q.payment_address as Address, BigInt(q.required_amount_raw.USDC!));
      const paid = await manual.protocols.execute(SLUG, 'swap', body, {
        idempotencyKey: first.idempotencyKey,
        paymentProof: { request_id: q.request_id, payer: paying.address, token: 'USDC', chain: q.chain, tx_hash: tx },
      });
      const id = paid.ok ? paid.value.request_id : q.request_id;
      const done = await manual.waitForTerminal(id, { minIntervalMs: 50, maxIntervalMs: 100, timeoutMs: 60_000 });
      if (!done.ok) throw done.error;
      return { done: done.value as Json, received: (await holdings(payerWallet)).USDC! - usdcBefore };
    }

    it('moved within the bounds: re-planned at signing, executed, and the wallet gets at least the first minimum', async () => {
      const { done, received } = await paidAfter(() => moveThePrice('10000')); // ≈ 0.2 % on 10 M a side: within the 0.5 %
      expect(done.status).toBe('confirmed');
      const minimum = BigInt(done.action.input.amount_out_minimum);
      expect(received).toBeGreaterThanOrEqual(minimum);
    });

    it('moved past the bounds: the swap fails with the router’s reason, nothing moves, and the payment becomes a credit', async () => {
      const before = await holdings(payerWallet);
      const { done, received } = await paidAfter(() => moveThePrice('200000')); // ≈ 4 %: past it
      expect(done.status).toBe('failed');
      expect(done.failure).toMatchObject({ protocol_error: { protocol: 'Uniswap v3', name: 'TooLittleReceived' } });
      expect(received).toBe(0n);
      expect((await holdings(payerWallet)).USDT).toBe(before.USDT);
      expect(done.credit).not.toBeNull();
    });
  });
});


describe('pool-a-v3 under a budget', () => {
  it('a swap is re-planned at signing and its reservation taken again: confirmed once, counted once; the next does not fit', async () => {
    const { api, clientId } = await svc.newKey('sponsored');
    const agent = `uni3-budget-${Date.now()}`;
    const namespace = (await svc.store.get('ApiClient', clientId)).metadata.namespace;
    await svc.store.create({
      apiVersion: API_VERSION,
      kind: 'AgentPolicy',
      metadata: { name: `${clientId}-one`, namespace },
      spec: { apiClient: clientId, suspended: false, rules: [{ name: 'anything', action: 'accept' }], budgets: [{ name: 'one', window: '1h', count: 1 }] },
    });
    const w = (await api.get(`/wallet?agent_id=${agent}&chain=ethereum`)).body.smart_wallet_address as Address;
    await (await newPayer(svc.devnet, 'ethereum')).mint('WETH', w, parseEther('1'));
    const swap = { agent_id: agent, chain: 'ethereum', token_in: 'WETH', token_out: 'USDC', amount_in: '0.01', fee: 500 };
    await expect.poll(async () => (await api.post('/policy/evaluate', { agent_id: agent, chain: 'ethereum', target_contract: w, calldata: '0x' })).body.budgets?.length, { timeout: 10_000 }).toBe(1);
    const first = await api.post(`/protocols/${SLUG}/swap`, swap);
    expect(first.status, JSON.stringify(first.body)).toBe(200);
    expect((await api.waitForTerminal(first.body.request_id, 60_000)).status).toBe('confirmed');
    const stored = await svc.store.get('ExecutionRequest', first.body.request_id);
    expect(stored.status?.signedCalls).toBeDefined(); // re-planned at signing
    expect(stored.status?.spend).toBeDefined();
    const second = await api.post(`/protocols/${SLUG}/swap`, swap);
    expect(second.status, JSON.stringify(second.body)).toBe(403);
    expect(second.body).toMatchObject({ error: 'policy_denied', budget: 'one' });
  });
});
