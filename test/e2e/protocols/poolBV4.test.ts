/**
 * pool-b-v4 (Uniswap v4 through the UniversalRouter) end to end on the devnet's real v4 deployment: every endpoint
 * through the HTTP API; each quote against the swap's effect read from the chain (the wallet's balances, not the
 * service's effects figure): exact in and out, native ETH in and out, a multi-hop; the refusals with their decoded
 * reasons; the Permit2 allowance left at zero; the CLI and MCP surfaces.
 */
import { join } from 'node:path';
import { Client } from '@modelcontextprotocol/client';
import { StdioClientTransport } from '@modelcontextprotocol/client/stdio';
import { erc20Abi, parseEther, type Address } from 'viem';
import { afterAll, afterEach, beforeAll, beforeEach, describe, expect, it } from 'vitest';
import { createClient, type AgentWalletClient } from '../../../src/client/index.ts';
import { permit2Abi } from '../../../src/protocols/uniswapV4/abi.ts';
import { runCli } from '../../support/cli.ts';
import { tempDir } from '../../support/env.ts';
import type { ChainName } from '../../../src/config/chains.ts';
import { newPayer } from '../../support/payer.ts';
import { familyCalls, fundTokens } from '../../support/protocols.ts';
import { startTestService, type TestService } from '../../support/service.ts';
import { holdPoolLockPerTest } from '../../support/poolLock.ts';

const SLUG = 'pool-b-v4';
const FUNDER = 2; // this file's funded account (ethereum)
type Json = Record<string, any>;


// Each test quotes and trades in the devnet's shared Uniswap pools: no other file trades there meanwhile.
holdPoolLockPerTest({ beforeEach, afterEach });
let svc: TestService;
let client: AgentWalletClient;
let c: ReturnType<typeof familyCalls>;
let config: Json; // the manifest's protocols.uniswapV4
beforeAll(async () => {
  svc = await startTestService();
  client = createClient({ baseUrl: svc.url, apiKey: (await svc.newKey('sponsored')).apiKey, attempts: 1 });
  c = familyCalls(client, SLUG);
  config = svc.devnet.chain('ethereum').protocols!.uniswapV4!;
});
afterAll(async () => {
  await svc?.stop();
});

const quote = (body: Json): Promise<Json> => c.compute('swap/quote', body);

describe('pool-b-v4: Uniswap v4 on the devnet', () => {
  const agent = `v4-${Date.now()}`;
  let wallet: Address;
  const chain = () => svc.devnet.publicClient('ethereum');
  const token = (symbol: string) => svc.devnet.chain('ethereum').tokens.find((t) => t.symbol === symbol)!;
  /** The wallet's holdings as the chain has them: native ETH and the ERC-20s. */
  const holdings = async () => {
    const erc20 = (s: string) => chain().readContract({ address: token(s).address, abi: erc20Abi, functionName: 'balanceOf', args: [wallet] });
    return { ETH: await chain().getBalance({ address: wallet }), USDC: await erc20('USDC'), USDT: await erc20('USDT') };
  };
  /** Swaps and answers what moved in the wallet, from chain state. */
  const swapped = async (body: Json) => {
    const before = await holdings();
    await c.execute('swap', { agent_id: agent, ...body });
    const after = await holdings();
    return { ETH: after.ETH - before.ETH, USDC: after.USDC - before.USDC, USDT: after.USDT - before.USDT };
  };
  const permit2Left = async (symbol: string) => {
    const [amount] = await chain().readContract({ address: config.permit2, abi: permit2Abi, functionName: 'allowance', args: [wallet, token(symbol).address, config.universalRouter] });
    const erc20 = await chain().readContract({ address: token(symbol).address, abi: erc20Abi, functionName: 'allowance', args: [wallet, config.permit2] });
    return { permit2: amount, erc20 };
  };

  beforeAll(async () => {
    const w = await client.wallet(agent, 'ethereum');
    if (!w.ok) throw w.error;
    wallet = w.value.smart_wallet_address as Address;
    await fundTokens(svc.devnet, 'ethereum', wallet, { USDC: '20000', USDT: '100' }, FUNDER);
    await svc.devnet.walletClient('ethereum', FUNDER).sendTransactionSync({ to: wallet, value: parseEther('5') });
  });

  it('pools, pool and balances: the listed pool keys, √P and price both ways, the wallet’s tokens', async () => {
    const { pools, tokens } = await c.get('pools');
    expect(pools.map((p: Json) => [p.pair, p.fee, p.tick_spacing])).toEqual([['ETH/USDC', 3000, 60], ['USDC/USDT', 500, 10]]);
    expect(tokens.map((t: Json) => t.symbol)).toEqual(['ETH', 'USDC', 'USDT']);
    expect((await c.get('pools', { pool: 'usdt/usdc' })).pools.map((p: Json) => p.pair)).toEqual(['USDC/USDT']);
    expect((await c.get('pools', { fee: '3000' })).pools.map((p: Json) => p.pair)).toEqual(['ETH/USDC']);
    const { pool } = await c.get('pool', { pool: 'ETH/USDC' });
    expect(pool).toMatchObject({ currency0: { symbol: 'ETH', address: '0x0000000000000000000000000000000000000000' }, hooks: '0x0000000000000000000000000000000000000000' });
    expect(Number(pool.price.token0_in_token1)).toBeCloseTo(3000, -1);
    expect(Number(pool.price.token1_in_token0) * Number(pool.price.token0_in_token1)).toBeCloseTo(1, 5);
    expect((await c.get('pool', { pool: pools[1].id })).pool.pair).toBe('USDC/USDT');
    const { balances } = await c.get('balances', { agent_id: agent });
    expect(balances.map((b: Json) => [b.token.symbol, b.balance.formatted])).toEqual([['ETH', '5'], ['USDC', '20000'], ['USDT', '100']]);
  });

  it('exact input, ERC-20 in and native ETH out: the chain moves what the quote said; the Permit2 allowance ends at zero', async () => {
    const q = await quote({ token_in: 'USDC', token_out: 'ETH', amount_in: '3000' });
    expect(q).toMatchObject({ side: 'exact_in', amount_in: { raw: '3000000000' }, route: [{ token_in: 'USDC', token_out: 'ETH', fee: 3000 }] });
    expect(Number(q.amount_out.formatted)).toBeGreaterThan(0.99);
    expect(q.price_impact_bps).toBeLessThan(5);
    expect(BigInt(q.minimum_received.raw)).toBe((BigInt(q.amount_out.raw) * 9950n) / 10000n);
    const sim = await c.simulate('swap', { agent_id: agent, token_in: 'USDC', token_out: 'ETH', amount_in: '3000' });
    expect(sim.calls.map((x: Json) => x.target_contract)).toEqual([token('USDC').address, config.permit2, config.universalRouter]);
    // Native ETH too: the simulation reads the wallet's own balance through its lens.
    expect(sim.effects.balance_changes.map((b: Json) => [b.token.symbol, b.change.raw])).toEqual([['USDC', '-3000000000'], ['ETH', q.amount_out.raw]]);
    expect(sim.bounds).toEqual({ amount_out_minimum: q.minimum_received.raw, deadline: expect.any(Number) });
    expect(await swapped({ token_in: 'USDC', token_out: 'ETH', amount_in: '3000' })).toEqual({ ETH: BigInt(q.amount_out.raw), USDC: -3_000_000_000n, USDT: 0n });
    expect(await permit2Left('USDC')).toEqual({ permit2: 0n, erc20: 0n });
  });

  it('exact output, native ETH in: pays the quoted ETH, the router sweeps the rest of the value back', async () => {
    const q = await quote({ token_in: 'ETH', token_out: 'USDC', amount_out: '1500' });
    expect(q).toMatchObject({ side: 'exact_out', amount_out: { raw: '1500000000' }, minimum_received: null });
    expect(BigInt(q.maximum_paid.raw)).toBeGreaterThan(BigInt(q.amount_in.raw));
    expect(await swapped({ token_in: 'ETH', token_out: 'USDC', amount_out: '1500' })).toEqual({ ETH: -BigInt(q.amount_in.raw), USDC: 1_500_000_000n, USDT: 0n });
  });

  it('exact output, ERC-20 in: pays the quote, and both allowances are set back to zero after', async () => {
    const q = await quote({ token_in: 'USDC', token_out: 'USDT', amount_out: '50' });
    const sim = await c.simulate('swap', { agent_id: agent, token_in: 'USDC', token_out: 'USDT', amount_out: '50' });
    expect(sim.calls).toHaveLength(5); // approve, Permit2.approve, execute, Permit2.approve(0), approve(0)
    expect(await swapped({ token_in: 'USDC', token_out: 'USDT', amount_out: '50' })).toEqual({ ETH: 0n, USDC: -BigInt(q.amount_in.raw), USDT: 50_000_000n });
    expect(await permit2Left('USDC')).toEqual({ permit2: 0n, erc20: 0n });
  });

  it('multi-hop, native ETH in: ETH → USDC → USDT as the route names it', async () => {
    const q = await quote({ token_in: 'ETH', token_out: 'USDT', amount_in: '0.5', route: 'USDC' });
    expect(q.route.map((h: Json) => [h.token_in, h.token_out, h.fee])).toEqual([['ETH', 'USDC', 3000], ['USDC', 'USDT', 500]]);
    expect(Number(q.mid_price)).toBeCloseTo(3000, -1);
    expect(await swapped({ token_in: 'ETH', token_out: 'USDT', amount_in: '0.5', route: 'USDC', fee: '3000,500' })).toEqual({ ETH: -parseEther('0.5'), USDC: 0n, USDT: BigInt(q.amount_out.raw) });
  });

  it('refuses a swap past its bounds with the router’s own error decoded: slippage, price impact, an expired deadline', async () => {
    const q = await quote({ token_in: 'ETH', token_out: 'USDC', amount_in: '0.1' });
    const tooMuch = { agent_id: agent, token_in: 'ETH', token_out: 'USDC', amount_in: '0.1', amount_out_minimum: String(BigInt(q.amount_out.raw) + 1n) };
    const slipped = await c.refusal(client.protocols.simulate(SLUG, 'swap', tooMuch));
    expect(slipped).toMatchObject({ status: 400, code: 'simulation_failed' });
    expect(slipped.body.protocol_error).toMatchObject({ protocol: 'Uniswap v4', name: 'V4TooLittleReceived' });
    expect(slipped.body.message).toMatch(/Uniswap v4 V4TooLittleReceived: the swap would return \d+, less than the minimum \d+/);
    const executed = await c.refusal(client.protocols.execute(SLUG, 'swap', tooMuch));
    expect(executed.body).toMatchObject({ error: 'simulation_failed', protocol_error: { name: 'V4TooLittleReceived' } });
    // The refused request's status record carries the same decoded reason (and so does its webhook: the same record).
    const record = await client.status(executed.body.request_id);
    expect(record.ok && record.value).toMatchObject({ status: 'failed', failure: { protocol_error: { protocol: 'Uniswap v4', name: 'V4TooLittleReceived' } } });

    const impact = await c.refusal(client.protocols.simulate(SLUG, 'swap', { agent_id: agent, token_in: 'ETH', token_out: 'USDC', amount_in: '4', max_price_impact_bps: 1 }));
    expect(impact).toMatchObject({ status: 400, code: 'price_impact_too_high' });
    expect(impact.body.price_impact_bps).toBeGreaterThan(1);

    const past = Number((await chain().getBlock()).timestamp) - 60;
    const late = await c.refusal(client.protocols.execute(SLUG, 'swap', { agent_id: agent, token_in: 'USDC', token_out: 'ETH', amount_in: '10', deadline: past }));
    expect(late.body).toMatchObject({ error: 'simulation_failed', protocol_error: { name: 'TransactionDeadlinePassed', message: 'the deadline passed before the swap was mined' } });
  });

  it('a price that moved between the 402 and the paid resend: the request keeps its first bounds, and the swap is refused with the router’s reason', async () => {
    const manual = createClient({ baseUrl: svc.url, apiKey: (await svc.newKey('manual')).apiKey, attempts: 1 });
    const payAgent = `${agent}-pays`;
    const w = await manual.wallet(payAgent, 'ethereum');
    if (!w.ok) throw w.error;
    await svc.devnet.walletClient('ethereum', FUNDER).sendTransactionSync({ to: w.value.smart_wallet_address as Address, value: parseEther('1') });
    const body = { agent_id: payAgent, token_in: 'ETH', token_out: 'USDC', amount_in: '0.1', slippage_bps: 10 };
    const first = await manual.protocols.execute(SLUG, 'swap', body);
    if (first.ok || first.error.status !== 402) throw new Error(`expected 402, got ${first.ok ? 200 : first.error.status}`);
    const quoteOf402 = first.error.payment!;
    const stored = await manual.status(quoteOf402.request_id);
    const minimum = stored.ok && (stored.value as Json).action.input.amount_out_minimum;
    expect(minimum).toMatch(/^\d+$/);
    // Another agent moves the ETH/USDC price down by about 1 % (more than the 0.1 % tolerated).
    await svc.devnet.walletClient('ethereum', FUNDER).sendTransactionSync({ to: wallet, value: parseEther('60') });
    await swapped({ token_in: 'ETH', token_out: 'USDC', amount_in: '60', max_price_impact_bps: 500 });
    const payer = await newPayer(svc.devnet, quoteOf402.chain as ChainName);
    const tx = await payer.pay('USDC', quoteOf402.payment_address as Address, BigInt(quoteOf402.required_amount_raw.USDC!));
    const paid = await manual.protocols.execute(SLUG, 'swap', body, {
      idempotencyKey: first.idempotencyKey,
      paymentProof: { request_id: quoteOf402.request_id, payer: payer.address, token: 'USDC', chain: quoteOf402.chain, tx_hash: tx },
    });
    // The paid resend is the first request, held to its calls and bounds: its simulation now reverts, refused with the reason.
    expect(paid.ok).toBe(false);
    expect((paid as { error: { status: number; body: Json } }).error).toMatchObject({ status: 400, body: { error: 'simulation_failed', protocol_error: { name: 'V4TooLittleReceived' } } });
    const after = await manual.status(quoteOf402.request_id);
    expect(after.ok && (after.value as Json).action.input.amount_out_minimum).toBe(minimum); // never loosened
  });

  it('refuses bad input with a 400 naming the field', async () => {
    const cases: [Json, string, string][] = [
      [{ token_in: 'DAI', token_out: 'ETH', amount_in: '1' }, 'unknown_token', 'token_in'],
      [{ token_in: 'USDC', token_out: 'usdc', amount_in: '1' }, 'same_token', 'token_out'],
      [{ token_in: 'ETH', token_out: 'USDT', amount_in: '1' }, 'unknown_pool', 'token_out'],
      [{ token_in: 'ETH', token_out: 'USDT', amount_in: '1', route: 'USDT' }, 'invalid_route', 'route'],
      [{ token_in: 'ETH', token_out: 'USDT', amount_in: '1', route: 'USDC', fee: '500,500' }, 'invalid_route', 'fee'],
      [{ token_in: 'USDC', token_out: 'ETH', amount_out: '20000' }, 'insufficient_liquidity', 'amount_out'],
      [{ token_in: 'USDC', token_out: 'ETH', amount_in: '1.0000001' }, 'invalid_amount', 'amount_in'],
      [{ token_in: 'USDC', token_out: 'ETH', amount_in: '1', amount_out: '1' }, 'invalid_request_shape', 'body'],
    ];
    for (const [body, code, field] of cases) {
      const e = await c.refusal(client.protocols.compute(SLUG, 'swap/quote', body));
      expect({ body, status: e.status, code: e.code, field: e.body.field ?? '' }).toEqual({ body, status: 400, code, field });
    }
    const slippage = await c.refusal(client.protocols.simulate(SLUG, 'swap', { agent_id: agent, token_in: 'USDC', token_out: 'ETH', amount_in: '1', slippage_bps: 501 }));
    expect({ code: slippage.code, field: slippage.body.field }).toEqual({ code: 'invalid_slippage', field: 'slippage_bps' });
  });

  it('the CLI’s swap/quote and swap, and the MCP tools, generated from the registry, work', { timeout: 180_000 }, async () => {
    const apiKey = (await svc.newKey('sponsored')).apiKey;
    const cliAgent = `${agent}-cli`;
    const env = { AGENT_WALLET_API_KEY: apiKey, AGENT_WALLET_BASE_URL: svc.url, AGENT_WALLET_JOURNAL: join(tempDir('aw-poolb-'), 'j.jsonl') };
    const w = await createClient({ baseUrl: svc.url, apiKey }).wallet(cliAgent, 'ethereum');
    if (!w.ok) throw w.error;
    await fundTokens(svc.devnet, 'ethereum', w.value.smart_wallet_address as Address, { USDC: '100' }, FUNDER);

    const q = await runCli(['pool-b-v4', 'swap/quote', '--token-in', 'USDC', '--token-out', 'USDT', '--amount-in', '10', '--json'], env);
    expect(q.code, q.stderr).toBe(0);
    expect(JSON.parse(q.stdout)).toMatchObject({ side: 'exact_in', token_out: { symbol: 'USDT' }, route: [{ fee: 500 }] });
    const run = await runCli(['uniswap-v4', 'swap', '--agent-id', cliAgent, '--token-in', 'USDC', '--token-out', 'USDT', '--amount-in', '10', '--slippage-bps', '100', '--wait'], env);
    expect(run.code, run.stderr).toBe(0);
    expect(run.stdout).toMatch(/status\s+confirmed/);

    const mcp = new Client({ name: 'pool-b-v4-test', version: '1.0.0' });
    const clean = Object.fromEntries(Object.entries(process.env).filter((e): e is [string, string] => e[1] !== undefined && !e[0].startsWith('AGENT_WALLET_')));
    await mcp.connect(new StdioClientTransport({ command: process.execPath, args: ['bin/agent-wallet.js', 'mcp'], env: { ...clean, ...env }, stderr: 'pipe' }));
    try {
      const call = async (name: string, args: Json) => (await mcp.callTool({ name, arguments: args })) as { isError?: boolean; structuredContent?: Json; content: { text: string }[] };
      const quoted = await call('pool_b_v4_read', { action: 'swap/quote', token_in: 'USDT', token_out: 'USDC', amount_out: '5' });
      expect(quoted.isError, quoted.content[0]?.text).toBeFalsy();
      expect(quoted.structuredContent).toMatchObject({ side: 'exact_out', amount_out: { formatted: '5' } });
      const swappedNow = await call('pool_b_v4_act', { action: 'swap', agent_id: cliAgent, token_in: 'USDC', token_out: 'USDT', amount_in: '5' });
      expect(swappedNow.isError, swappedNow.content[0]?.text).toBeFalsy();
      const status = await call('get_status', { request_id: swappedNow.structuredContent!.request_id, wait_seconds: 30 });
      expect(status.structuredContent!.status).toBe('confirmed');
    } finally {
      await mcp.close();
    }
  });

  it('every endpoint is protected: 401 without a key', async () => {
    const anonymous = createClient({ baseUrl: svc.url, apiKey: undefined, attempts: 1 });
    for (const path of ['pools', 'pool', 'balances']) expect((await c.refusal(anonymous.protocols.read(SLUG, path))).status).toBe(401);
    expect((await c.refusal(anonymous.protocols.compute(SLUG, 'swap/quote', {}))).status).toBe(401);
    expect((await c.refusal(anonymous.protocols.simulate(SLUG, 'swap', {}))).status).toBe(401);
  });
});
