/**
 * The protocol families in the cluster layout: one action per family through the real kube-apiserver (gateway,
 * controllers and chain workers as processes, reads over gRPC), its simulation's effects first, then the
 * execution to confirmed and the position read back; a GMX order (perp-v2) followed by the orders controller to
 * the keeper's execution.
 */
import { erc20Abi, parseEther, type Address } from 'viem';
import { afterAll, beforeAll, expect, it } from 'vitest';
import { createClient, type AgentWalletClient } from '../../src/client/index.ts';
import { positionManagerAbi } from '../../src/protocols/uniswapV3/positionManagerAbi.ts';
import { startTestCluster, type TestCluster } from '../support/cluster.ts';
import { acquirePoolLock } from '../support/poolLock.ts';
import { fundTokens } from '../support/protocols.ts';

type Json = Record<string, any>;
let cluster: TestCluster;
beforeAll(async () => {
  cluster = await startTestCluster();
});
afterAll(async () => {
  await cluster?.stop();
});

/** Per family: the wallet's funding, one action (simulated, then executed), and what its position then shows. */
const CASES: {
  slug: string;
  chain: 'ethereum' | 'base';
  fund: Record<string, string>;
  action: string;
  body: Json;
  /** How the position is read back (default: GET position of the agent). */
  readBack?(client: AgentWalletClient, agent: string, wallet: Address): Promise<{ ok: boolean; value?: Json; error?: unknown }>;
  check(position: Json): void;
}[] = [
  {
    slug: 'lend-a-v3',
    chain: 'ethereum',
    fund: { WETH: '1' },
    action: 'supply',
    body: { token: 'WETH', amount: '1' },
    check: (p) => expect(p.position).toMatchObject({ total_collateral_usd: '3000', available_borrows_usd: '2400' }),
  },
  {
    slug: 'lend-b-v3',
    chain: 'base',
    fund: { WETH: '1' },
    action: 'supply',
    body: { token: 'WETH', amount: '1' },
    check: (p) => expect(p.positions[0]).toMatchObject({ collateral: [{ token: { symbol: 'WETH' }, balance: { formatted: '1' } }] }),
  },
  {
    slug: 'lend-c',
    chain: 'base',
    fund: { WETH: '1' },
    action: 'supply-collateral',
    // The 86 % WETH/USDC market (the devnet has two markets of that pair).
    body: { market: '0x803d4616fcd4d768d893c25081caf0d6d97c9b74133dfba9cd5e0da18129dec3', amount: '1' },
    check: (p) => expect(p.positions[0]).toMatchObject({ pair: 'WETH/USDC', collateral: { formatted: '1' }, max_borrow: { formatted: '2580' } }),
  },
  {
    slug: 'pool-a-v3',
    chain: 'ethereum',
    fund: { WETH: '1', USDC: '2000' },
    action: 'liquidity/add',
    // Full range in the 0.05 % USDC/WETH pool, 0.5 WETH (token1) and the USDC it needs.
    body: { pool: 'USDC/WETH', fee: 500, amount1: '0.5' },
    // The new NFT's id from the chain, then the position through the service (its reads over gRPC): a remove's quote.
    async readBack(client, agent, wallet) {
      const pub = cluster.devnet.publicClient('ethereum');
      const npm = cluster.devnet.chain('ethereum').protocols!.uniswapV3!.positionManager;
      const id = await pub.readContract({ address: npm, abi: positionManagerAbi, functionName: 'tokenOfOwnerByIndex', args: [wallet, 0n] });
      return client.protocols.compute<Json>('pool-a-v3', 'liquidity/remove/quote', { agent_id: agent, position: id.toString(), percentage: 100 });
    },
    check: (q) => {
      expect(q.position).toMatchObject({ fee: 500, full_range: true, in_range: true, amount1: { formatted: expect.stringMatching(/^0\.4999999/) } });
      expect(BigInt(q.position.liquidity)).toBeGreaterThan(0n);
    },
  },
];

for (const c of CASES) {
  it(`${c.slug}: ${c.action} simulated with its effects, executed to confirmed, read back`, { timeout: 120_000 }, async () => {
    const client = createClient({ baseUrl: cluster.url, apiKey: (await cluster.newKey('sponsored')).apiKey });
    const agent = `cluster-${c.slug}`;
    const w = await client.wallet(agent, c.chain);
    if (!w.ok) throw w.error;
    await fundTokens(cluster.devnet, c.chain, w.value.smart_wallet_address as Address, c.fund, 2);
    const body = { agent_id: agent, ...c.body };
    const sim = await client.protocols.simulate<Json>(c.slug, c.action, body);
    if (!sim.ok) throw sim.error;
    expect(sim.value.effects.balance_changes.length).toBeGreaterThan(0);
    expect(sim.value.effects.position_after).not.toBeNull();
    const idempotencyKey = `cluster-${c.slug}-once`;
    const run = await client.protocols.execute(c.slug, c.action, body, { idempotencyKey });
    if (!run.ok) throw run.error;
    const done = await client.waitForTerminal(run.value.request_id, { minIntervalMs: 100, maxIntervalMs: 200, timeoutMs: 60_000 });
    expect(done.ok && done.value.status).toBe('confirmed');
    // The action is on the request (spec.action through the kube store): the status record carries it, and a
    // retry with the same key and body (its keys in another order) is the same request.
    expect(done.ok && (done.value as Json).action).toMatchObject({ name: `${c.slug}/${c.action}`, input: { agent_id: agent, chain: c.chain } });
    const again = await client.protocols.execute(c.slug, c.action, Object.fromEntries(Object.entries(body).reverse()), { idempotencyKey });
    expect(again.ok && again.value.request_id).toBe(run.value.request_id);
    const position = c.readBack
      ? await c.readBack(client, agent, w.value.smart_wallet_address as Address)
      : await client.protocols.read<Json>(c.slug, 'position', { agent_id: agent });
    if (!position.ok) throw position.error;
    c.check(position.value!);
  });
}

/** Per exchange family: one swap, quoted, simulated and executed (re-planned at signing by the controller), read back. */
const SWAP_CASES: { slug: string; fund: Record<string, string>; body: Json; paid: string; got: string }[] = [
  { slug: 'pool-a-v3', fund: { WETH: '1' }, body: { token_in: 'WETH', token_out: 'USDC', amount_in: '0.5', fee: 3000 }, paid: 'WETH', got: 'USDC' },
  { slug: 'pool-b-v4', fund: { USDC: '100' }, body: { token_in: 'USDC', token_out: 'USDT', amount_in: '100' }, paid: 'USDC', got: 'USDT' },
];

for (const c of SWAP_CASES) {
  it(`${c.slug}: a swap quoted, simulated, executed to confirmed within the first plan's bounds, balances read back`, { timeout: 120_000 }, async () => {
    const client = createClient({ baseUrl: cluster.url, apiKey: (await cluster.newKey('sponsored')).apiKey });
    const agent = `cluster-${c.slug}`;
    const w = await client.wallet(agent, 'ethereum');
    if (!w.ok) throw w.error;
    await fundTokens(cluster.devnet, 'ethereum', w.value.smart_wallet_address as Address, c.fund, 2);
    const quote = await client.protocols.compute<Json>(c.slug, 'swap/quote', c.body);
    if (!quote.ok) throw quote.error;
    const body = { agent_id: agent, ...c.body };
    const sim = await client.protocols.simulate<Json>(c.slug, 'swap', body);
    if (!sim.ok) throw sim.error;
    expect(sim.value.effects.balance_changes.find((b: Json) => b.token.symbol === c.got).change.raw).toBe(quote.value.amount_out.raw);
    const run = await client.protocols.execute(c.slug, 'swap', body);
    if (!run.ok) throw run.error;
    const done = await client.waitForTerminal(run.value.request_id, { minIntervalMs: 100, maxIntervalMs: 200, timeoutMs: 60_000 });
    expect(done.ok && done.value.status).toBe('confirmed');
    expect(done.ok && (done.value as Json).action.input).toMatchObject({ amount_out_minimum: quote.value.minimum_received.raw });
    const balances = await client.protocols.read<Json>(c.slug, 'balances', { agent_id: agent });
    if (!balances.ok) throw balances.error;
    const held = (s: string) => balances.value.balances.find((b: Json) => b.token.symbol === s).balance.raw;
    expect(BigInt(held(c.got))).toBe(BigInt(quote.value.amount_out.raw));
  });
}

/**
 * perp-v2: a GMX order followed to the keeper's execution. Confirmed is when the create is mined; the orders
 * controller (against the real API server, its chain reads over the worker's getLogs) then follows the order to
 * what the devnet's keeper made of it, into status.order, and the client's wait goes on until then.
 */
it('perp-v2: a market long simulated, executed, followed to the keeper\'s execution (status.order), then closed with size_usd max', { timeout: 240_000 }, async () => {
  // The devnet's one GMX market is shared with other files that move its price feed.
  const release = await acquirePoolLock('gmx');
  try {
    const client = createClient({ baseUrl: cluster.url, apiKey: (await cluster.newKey('sponsored')).apiKey });
    const agent = 'cluster-perp-v2';
    const w = await client.wallet(agent, 'arbitrum');
    if (!w.ok) throw w.error;
    const wallet = w.value.smart_wallet_address as Address;
    // Funded account 2 is this file's, on every chain (no other cluster file sends from it on arbitrum).
    await fundTokens(cluster.devnet, 'arbitrum', wallet, { USDC: '1000' }, 2);
    await cluster.devnet.walletClient('arbitrum', 2).sendTransactionSync({ to: wallet, value: parseEther('0.1') }); // the execution fees
    const order = async (body: Json): Promise<Json> => {
      const run = await client.protocols.execute('perp-v2', 'orders', { agent_id: agent, market: 'ETH', side: 'long', collateral_token: 'USDC', ...body });
      if (!run.ok) throw run.error;
      const done = await client.waitForTerminal(run.value.request_id, { minIntervalMs: 100, maxIntervalMs: 200, timeoutMs: 90_000 });
      if (!done.ok) throw done.error;
      return done.value as Json;
    };
    const positions = async (): Promise<Json[]> => {
      const r = await client.protocols.read<Json>('perp-v2', 'positions', { agent_id: agent });
      if (!r.ok) throw r.error;
      return r.value.positions;
    };

    const open = { type: 'market_increase', size_usd: '1000', collateral_amount: '200' };
    const sim = await client.protocols.simulate<Json>('perp-v2', 'orders', { agent_id: agent, market: 'ETH', side: 'long', collateral_token: 'USDC', ...open });
    if (!sim.ok) throw sim.error;
    const changes = Object.fromEntries(sim.value.effects.balance_changes.map((b: Json) => [b.token.symbol, b.change.raw]));
    expect(changes.USDC).toBe((-200_000_000n).toString());
    expect(BigInt(changes.ETH)).toBe(-BigInt(sim.value.preview.execution_fee.raw));

    const opened = await order(open);
    expect(opened.status).toBe('confirmed');
    expect(opened.order).toMatchObject({ state: 'executed', reason: null, key: expect.stringMatching(/^0x[0-9a-f]{64}$/) });
    expect(Number(opened.order.fill_price)).toBeGreaterThan(0);
    expect(Number(opened.order.fill_price)).toBeLessThanOrEqual(Number(opened.action.input.acceptable_price));
    // What the API showed is the resource's status.order, as the API server has it (the CRD's schema kept it).
    const stored = await cluster.store.get('ExecutionRequest', opened.request_id);
    expect(stored.status?.phase).toBe('Confirmed');
    expect(stored.status?.order).toMatchObject({ key: opened.order.key, state: 'Executed', fillPrice: opened.order.fill_price });
    const held = await positions();
    expect(held).toHaveLength(1);
    expect(held[0]).toMatchObject({ side: 'long', collateral_token: { symbol: 'USDC' }, size_usd: '1000' });
    expect(Number(held[0]!.entry_price)).toBeCloseTo(Number(opened.order.fill_price), 6);

    const closed = await order({ type: 'market_decrease', size_usd: 'max' });
    expect(closed.status).toBe('confirmed');
    expect(closed.order).toMatchObject({ state: 'executed', reason: null });
    expect((await cluster.store.get('ExecutionRequest', closed.request_id)).status?.order?.state).toBe('Executed');
    expect(await positions()).toEqual([]);

    // Liquidity: a deposit of USDC followed to the keeper's mint, then all of its GM withdrawn, the same way.
    const settled = async (action: string, body: Json): Promise<Json> => {
      const run = await client.protocols.execute('perp-v2', action, { agent_id: agent, market: 'ETH', ...body });
      if (!run.ok) throw run.error;
      const done = await client.waitForTerminal(run.value.request_id, { minIntervalMs: 100, maxIntervalMs: 200, timeoutMs: 90_000 });
      if (!done.ok) throw done.error;
      return done.value as Json;
    };
    const markets = await client.protocols.read<Json>('perp-v2', 'markets');
    if (!markets.ok) throw markets.error;
    const marketToken = markets.value.markets[0].market as Address;
    const gmHeld = () => cluster.devnet.publicClient('arbitrum').readContract({ address: marketToken, abi: erc20Abi, functionName: 'balanceOf', args: [wallet] });
    const deposited = await settled('deposits', { short_amount: '100' });
    expect(deposited).toMatchObject({ status: 'confirmed', order: { state: 'executed', fill_price: null } });
    expect((await cluster.store.get('ExecutionRequest', deposited.request_id)).status?.order?.state).toBe('Executed');
    expect(await gmHeld()).toBeGreaterThanOrEqual(BigInt(deposited.action.input.min_market_tokens));
    const withdrawn = await settled('withdrawals', { amount: 'max' });
    expect(withdrawn).toMatchObject({ status: 'confirmed', order: { state: 'executed' } });
    expect(await gmHeld()).toBe(0n);
  } finally {
    release();
  }
});
