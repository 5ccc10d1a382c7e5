/**
 * The protocol families in the cluster layout: one action per family through the real kube-apiserver (gateway,
 * controllers and chain workers as processes, reads over gRPC), its simulation's effects first, then the
 * execution to confirmed and the position read back.
 */
import type { Address } from 'viem';
import { afterAll, beforeAll, expect, it } from 'vitest';
import { createClient, type AgentWalletClient } from '../../src/client/index.ts';
import { positionManagerAbi } from '../../src/protocols/uniswapV3/positionManagerAbi.ts';
import { startTestCluster, type TestCluster } from '../support/cluster.ts';
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
