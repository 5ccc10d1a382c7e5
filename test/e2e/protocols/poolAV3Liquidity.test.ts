/**
 * pool-a-v3 (Uniswap v3) liquidity end to end on the devnet's real v3 contracts: quotes against what the chain then
 * takes and pays (the wallet's balances and the position manager's own record, read from chain, never the
 * service's effects figures), fees of swaps made in between by another account straight to SwapRouter02, a
 * slippage bound breached and an expired deadline refused with the position manager's reason, another wallet's
 * position refused, and bad input. The add-then-remove flow of docs/protocols/pool-a-v3.md (its blocks that need the
 * position's token id from GET balances) is checked here.
 */
import { erc20Abi, getAddress, maxUint256, parseUnits, type Address } from 'viem';
import { afterAll, afterEach, beforeAll, beforeEach, describe, expect, it } from 'vitest';
import { createClient, type AgentWalletClient } from '../../../src/client/index.ts';
import { poolAbi, swapRouter02Abi } from '../../../src/protocols/uniswapV3/abi.ts';
import { tickAtSqrtRatio } from '../../../src/protocols/uniswapV3/liquidity/tickMath.ts';
import { poolAddress } from '../../../src/protocols/uniswapV3/pools.ts';
import { positionManagerAbi } from '../../../src/protocols/uniswapV3/positionManagerAbi.ts';
import { familyCalls, fundTokens } from '../../support/protocols.ts';
import { newPayer } from '../../support/payer.ts';
import { startTestService, type TestService } from '../../support/service.ts';
import { holdPoolLockPerTest } from '../../support/poolLock.ts';

const SLUG = 'pool-a-v3';
const CHAIN = 'ethereum';
const FUNDER = 1; // this file's funded account on ethereum
type Json = Record<string, any>;


// Each test quotes and trades in the devnet's shared Uniswap pools: no other file trades there meanwhile.
holdPoolLockPerTest({ beforeEach, afterEach });
let svc: TestService;
let client: AgentWalletClient;
let c: ReturnType<typeof familyCalls>;
let v3: { positionManager: Address; swapRouter02: Address };
let usdc: Address;
let weth: Address;
let usdcIs0: boolean;
beforeAll(async () => {
  svc = await startTestService();
  client = createClient({ baseUrl: svc.url, apiKey: (await svc.newKey('sponsored')).apiKey, attempts: 1 });
  c = familyCalls(client, SLUG);
  const chain = svc.devnet.chain(CHAIN);
  v3 = chain.protocols!.uniswapV3! as typeof v3;
  usdc = chain.tokens.find((t) => t.symbol === 'USDC')!.address;
  weth = chain.tokens.find((t) => t.symbol === 'WETH')!.address;
  usdcIs0 = BigInt(usdc) < BigInt(weth);
});
afterAll(async () => {
  await svc?.stop();
});

const quote = async (path: string, body: Json): Promise<Json> => {
  const r = await client.protocols.compute<Json>(SLUG, path, body);
  if (!r.ok) throw r.error;
  return r.value;
};
const balances = async (owner: Address): Promise<[bigint, bigint]> => {
  const pub = svc.devnet.publicClient(CHAIN);
  const [u, w] = await Promise.all([usdc, weth].map((t) => pub.readContract({ address: t, abi: erc20Abi, functionName: 'balanceOf', args: [owner] })));
  return usdcIs0 ? [u!, w!] : [w!, u!];
};
const nftRecord = (tokenId: bigint) => svc.devnet.publicClient(CHAIN).readContract({ address: v3.positionManager, abi: positionManagerAbi, functionName: 'positions', args: [tokenId] });
const lastNft = async (owner: Address): Promise<bigint> => {
  const pub = svc.devnet.publicClient(CHAIN);
  const n = await pub.readContract({ address: v3.positionManager, abi: positionManagerAbi, functionName: 'balanceOf', args: [owner] });
  return pub.readContract({ address: v3.positionManager, abi: positionManagerAbi, functionName: 'tokenOfOwnerByIndex', args: [owner, n - 1n] });
};

/** An outside trader: a fresh account swaps `amount` of `tokenIn` in the USDC/WETH 0.3% pool straight through SwapRouter02. */
async function outsideSwap(tokenIn: 'USDC' | 'WETH', amount: string) {
  const payer = await newPayer(svc.devnet, CHAIN);
  const [inAddr, outAddr] = tokenIn === 'USDC' ? [usdc, weth] : [weth, usdc];
  const raw = parseUnits(amount, tokenIn === 'USDC' ? 6 : 18);
  await payer.mint(tokenIn, payer.address, raw);
  await payer.wallet.writeContractSync({ address: inAddr, abi: erc20Abi, functionName: 'approve', args: [v3.swapRouter02, maxUint256] });
  await payer.wallet.writeContractSync({
    address: v3.swapRouter02,
    abi: swapRouter02Abi,
    functionName: 'exactInputSingle',
    args: [{ tokenIn: inAddr, tokenOut: outAddr, fee: 3000, recipient: payer.address, amountIn: raw, amountOutMinimum: 0n, sqrtPriceLimitX96: 0n }],
  });
}

describe('pool-a-v3 liquidity: Uniswap v3 on the devnet', () => {
  const agent = `v3lp-${Date.now()}`;
  const other = `${agent}-other`;
  let wallet: Address;
  let tokenId: bigint;
  // 1 WETH and its USDC side, in 2500–3500 USDC per WETH, quoted in USDC whichever token is token0.
  const addBody = () => ({ agent_id: agent, pool: 'USDC/WETH', fee: 3000, price_lower: '2500', price_upper: '3500', quote_token: 'USDC', [usdcIs0 ? 'amount1' : 'amount0']: '1' });
  beforeAll(async () => {
    const w = await client.wallet(agent, CHAIN);
    if (!w.ok) throw w.error;
    wallet = getAddress(w.value.smart_wallet_address);
    await fundTokens(svc.devnet, CHAIN, wallet, { WETH: '5', USDC: '20000' }, FUNDER);
  });

  it('TickMath here agrees with every devnet pool: the tick of its √price is the tick the pool keeps', async () => {
    const pub = svc.devnet.publicClient(CHAIN);
    const config = svc.devnet.chain(CHAIN).protocols!.uniswapV3!;
    for (const p of config.pools) {
      const [s, t] = BigInt(p.tokenA) < BigInt(p.tokenB) ? [p.tokenA, p.tokenB] : [p.tokenB, p.tokenA];
      const [sqrtPriceX96, tick] = await pub.readContract({ address: poolAddress(config.factory, s, t, p.fee), abi: poolAbi, functionName: 'slot0' });
      expect(tickAtSqrtRatio(sqrtPriceX96)).toBe(tick);
    }
  });

  it('quote: the range snapped outwards to the tick spacing, the other side computed, the minimums at the slippage', async () => {
    const q = await quote('liquidity/add/quote', addBody());
    expect(q).toMatchObject({ action: 'mint', position: null, full_range: false, in_range: true, slippage_bps: 50, quote_token: { symbol: 'USDC' } });
    expect(q.tick_lower % 60).toBe(0);
    expect(q.tick_upper % 60).toBe(0);
    const usdcPerWeth = (p: Json) => Number(usdcIs0 ? p.token0_per_token1 : p.token1_per_token0);
    const [lo, hi] = [usdcPerWeth(q.price_lower), usdcPerWeth(q.price_upper)].sort((a, b) => a - b);
    expect(lo).toBeLessThanOrEqual(2500);
    expect(lo).toBeGreaterThan(2500 * 0.994); // within one spacing (60 ticks ≈ 0.6 %)
    expect(hi).toBeGreaterThanOrEqual(3500);
    expect(hi).toBeLessThan(3500 * 1.006);
    const [wethSide, usdcSide] = usdcIs0 ? [q.amount1, q.amount0] : [q.amount0, q.amount1];
    expect((usdcIs0 ? q.amount1_desired : q.amount0_desired).formatted).toBe('1');
    // The manager rounds the liquidity the desired amounts buy down, and the pool rounds what it takes for it up:
    // at most the desired amount, a few wei under it.
    const wethWanted = 10n ** 18n;
    expect(BigInt(wethSide.raw) <= wethWanted && wethWanted - BigInt(wethSide.raw) < 10n ** 6n).toBe(true);
    expect(Number(usdcSide.formatted)).toBeGreaterThan(1000); // the USDC the range needs next to 1 WETH at 3000
    expect(BigInt(q.amount0_min.raw)).toBe((BigInt(q.amount0.raw) * 9950n) / 10000n);
  });

  it('add: the simulation predicts the position; the chain takes exactly the quoted amounts and records the quoted liquidity', async () => {
    const q = await quote('liquidity/add/quote', addBody());
    const sim = await c.simulate('liquidity/add', addBody());
    expect(sim.calls).toHaveLength(5); // approve ×2, mint, approve(0) ×2
    expect(sim.effects.position_before).toBeNull();
    expect(sim.effects.position_after).toMatchObject({ token_id: null, liquidity: q.liquidity, tick_lower: q.tick_lower, tick_upper: q.tick_upper, in_range: true });
    expect(sim.bounds).toMatchObject({ amount0_min: q.amount0_min.raw, amount1_min: q.amount1_min.raw });
    const before = await balances(wallet);
    await c.execute('liquidity/add', addBody());
    const after = await balances(wallet);
    expect([before[0] - after[0], before[1] - after[1]]).toEqual([BigInt(q.amount0.raw), BigInt(q.amount1.raw)]);
    tokenId = await lastNft(wallet);
    const record = await nftRecord(tokenId);
    expect(record[7]).toBe(BigInt(q.liquidity));
    expect([record[5], record[6]]).toEqual([q.tick_lower, q.tick_upper]);
    // Nothing stays approved to the position manager.
    const pub = svc.devnet.publicClient(CHAIN);
    for (const t of [usdc, weth]) expect(await pub.readContract({ address: t, abi: erc20Abi, functionName: 'allowance', args: [wallet, v3.positionManager] })).toBe(0n);
  });

  it('increase: more liquidity to the same NFT, as quoted', async () => {
    const body = { agent_id: agent, position: tokenId.toString(), [usdcIs0 ? 'amount1' : 'amount0']: '0.5' };
    const q = await quote('liquidity/add/quote', body);
    expect(q).toMatchObject({ action: 'increase', position: tokenId.toString() });
    const liquidityBefore = (await nftRecord(tokenId))[7];
    const before = await balances(wallet);
    await c.execute('liquidity/add', body);
    const after = await balances(wallet);
    expect([before[0] - after[0], before[1] - after[1]]).toEqual([BigInt(q.amount0.raw), BigInt(q.amount1.raw)]);
    expect((await nftRecord(tokenId))[7]).toBe(liquidityBefore + BigInt(q.liquidity));
  });

  it('swaps in between earn fees; remove 100% pays back exactly the quoted tokens and fees, and leaves the NFT empty', async () => {
    await outsideSwap('USDC', '30000');
    await outsideSwap('WETH', '10');
    const q = await quote('liquidity/remove/quote', { agent_id: agent, position: tokenId.toString(), percentage: 100 });
    expect(BigInt(q.fees0.raw)).toBeGreaterThan(0n);
    expect(BigInt(q.fees1.raw)).toBeGreaterThan(0n);
    expect(q.position).toMatchObject({ token_id: tokenId.toString(), in_range: true, fees_owed0: q.fees0, fees_owed1: q.fees1 });
    const sim = await c.simulate('liquidity/remove', { agent_id: agent, position: tokenId.toString(), percentage: 100 });
    expect(sim.calls).toHaveLength(1); // the position manager's multicall: decreaseLiquidity + collect
    expect(sim.effects.position_after).toMatchObject({ liquidity: '0', fees_owed0: { raw: '0' }, fees_owed1: { raw: '0' } });
    const before = await balances(wallet);
    await c.execute('liquidity/remove', { agent_id: agent, position: tokenId.toString(), percentage: 100 });
    const after = await balances(wallet);
    expect([after[0] - before[0], after[1] - before[1]]).toEqual([BigInt(q.total0.raw), BigInt(q.total1.raw)]);
    const record = await nftRecord(tokenId);
    expect([record[7], record[10], record[11]]).toEqual([0n, 0n, 0n]); // liquidity and tokens owed: nothing left
    // Empty now: nothing to remove.
    const empty = await c.refusal(client.protocols.compute(SLUG, 'liquidity/remove/quote', { agent_id: agent, position: tokenId.toString(), percentage: 100 }));
    expect({ status: empty.status, code: empty.code }).toEqual({ status: 400, code: 'nothing_to_withdraw' });
  });

  it('a partial remove of a full-range position pays the quoted share', async () => {
    const body = { agent_id: agent, pool: 'USDC/WETH', fee: 3000, [usdcIs0 ? 'amount0' : 'amount1']: '3000' };
    const added = await quote('liquidity/add/quote', body);
    expect(added.full_range).toBe(true);
    await c.execute('liquidity/add', body);
    const id = await lastNft(wallet);
    const q = await quote('liquidity/remove/quote', { agent_id: agent, position: id.toString(), percentage: 40 });
    expect(BigInt(q.liquidity)).toBe((BigInt(added.liquidity) * 40n) / 100n);
    const before = await balances(wallet);
    await c.execute('liquidity/remove', { agent_id: agent, position: id.toString(), percentage: 40 });
    const after = await balances(wallet);
    expect([after[0] - before[0], after[1] - before[1]]).toEqual([BigInt(q.total0.raw), BigInt(q.total1.raw)]);
    expect((await nftRecord(id))[7]).toBe(BigInt(added.liquidity) - BigInt(q.liquidity));
  });

  it('native ETH: the WETH side paid as the call’s value (the rest refunded) and received back unwrapped', async () => {
    const eth = `${agent}-eth`;
    const w = await client.wallet(eth, CHAIN);
    if (!w.ok) throw w.error;
    const ethWallet = getAddress(w.value.smart_wallet_address);
    const pub = svc.devnet.publicClient(CHAIN);
    await fundTokens(svc.devnet, CHAIN, ethWallet, { USDC: '5000' }, FUNDER);
    await pub.request({ method: 'anvil_setBalance', params: [ethWallet, '0x8ac7230489e80000'] } as never); // 10 ETH
    const wethIs = usdcIs0 ? 1 : 0;
    const body = { agent_id: eth, pool: 'USDC/WETH', fee: 3000, native: true, [usdcIs0 ? 'amount1' : 'amount0']: '0.5' };
    const q = await quote('liquidity/add/quote', body);
    const taken = [BigInt(q.amount0.raw), BigInt(q.amount1.raw)];
    const sim = await c.simulate('liquidity/add', body);
    expect(sim.calls).toHaveLength(3); // approve USDC, multicall(mint, refundETH) with value, approve(0)
    expect(BigInt(sim.calls[1].value)).toBe(BigInt((wethIs === 0 ? q.amount0_desired : q.amount1_desired).raw));
    expect(sim.effects.balance_changes.map((b: Json) => b.token.symbol).sort()).toEqual(['ETH', 'USDC']);
    const ethBefore = await pub.getBalance({ address: ethWallet });
    const before = await balances(ethWallet);
    await c.execute('liquidity/add', body);
    const after = await balances(ethWallet);
    // Gas is the paymaster's (a sponsored key): the wallet's ETH moves by what the pool took, the rest refunded.
    expect(ethBefore - (await pub.getBalance({ address: ethWallet }))).toBe(taken[wethIs]);
    expect(after[wethIs]).toBe(before[wethIs]); // no WETH involved
    expect(before[1 - wethIs]! - after[1 - wethIs]!).toBe(taken[1 - wethIs]);
    const id = await lastNft(ethWallet);
    const r = await quote('liquidity/remove/quote', { agent_id: eth, position: id.toString(), percentage: 100 });
    const total = [BigInt(r.total0.raw), BigInt(r.total1.raw)];
    const ethMid = await pub.getBalance({ address: ethWallet });
    await c.execute('liquidity/remove', { agent_id: eth, position: id.toString(), percentage: 100, native: true });
    const end = await balances(ethWallet);
    expect((await pub.getBalance({ address: ethWallet })) - ethMid).toBe(total[wethIs]);
    expect(end[wethIs]).toBe(0n);
    expect(end[1 - wethIs]! - after[1 - wethIs]!).toBe(total[1 - wethIs]);
    const noWeth = await c.refusal(client.protocols.simulate(SLUG, 'liquidity/add', { agent_id: eth, pool: 'USDC/USDT', fee: 500, native: true, amount0: '1' }));
    expect({ code: noWeth.code, field: noWeth.body.field }).toEqual({ code: 'unknown_token', field: 'native' });
  });

  it('the price moved past the slippage between quote and add: refused with the position manager’s PriceSlippageCheck', async () => {
    const q = await quote('liquidity/add/quote', { ...addBody(), slippage_bps: 10 });
    const body = { agent_id: agent, pool: 'USDC/WETH', fee: 3000, price_lower: '2500', price_upper: '3500', quote_token: 'USDC', amount0: q.amount0_desired.formatted, amount1: q.amount1_desired.formatted, amount0_min: q.amount0_min.raw, amount1_min: q.amount1_min.raw };
    // Each 100 WETH sold lowers the price ≈1 % at the devnet's seed liquidity, and the range then takes more WETH and
    // less USDC than quoted. The pool is shared with the docs' pages, which may have left its price or its liquidity
    // elsewhere: sell until the quote no longer holds (a few times at most), then check the refusal itself.
    let moved = await client.protocols.simulate(SLUG, 'liquidity/add', body);
    for (let i = 0; i < 6 && moved.ok; i++) {
      await outsideSwap('WETH', '100');
      moved = await client.protocols.simulate(SLUG, 'liquidity/add', body);
    }
    const refused = await c.refusal(Promise.resolve(moved));
    expect(refused).toMatchObject({ status: 400, code: 'simulation_failed' });
    expect(refused.body.protocol_error).toMatchObject({ protocol: 'Uniswap v3', name: 'PriceSlippageCheck', code: 'Price slippage check' });
    const executed = await c.refusal(client.protocols.execute(SLUG, 'liquidity/add', body));
    expect(executed.body).toMatchObject({ error: 'simulation_failed', protocol_error: { name: 'PriceSlippageCheck' } });
  });

  it('an expired deadline is refused with TransactionTooOld', async () => {
    const refused = await c.refusal(client.protocols.simulate(SLUG, 'liquidity/add', { ...addBody(), deadline: 1_000 }));
    expect(refused.body.protocol_error).toMatchObject({ name: 'TransactionTooOld', code: 'Transaction too old' });
  });

  it('another wallet’s position is refused: unknown_position, for quotes and actions', async () => {
    const w = await client.wallet(other, CHAIN);
    if (!w.ok) throw w.error;
    await fundTokens(svc.devnet, CHAIN, getAddress(w.value.smart_wallet_address), { WETH: '1', USDC: '5000' }, FUNDER);
    const id = tokenId.toString();
    const attempts = [
      client.protocols.compute(SLUG, 'liquidity/remove/quote', { agent_id: other, position: id, percentage: 50 }),
      client.protocols.simulate(SLUG, 'liquidity/remove', { agent_id: other, position: id, percentage: 50 }),
      client.protocols.execute(SLUG, 'liquidity/remove', { agent_id: other, position: id, percentage: 50 }),
      client.protocols.simulate(SLUG, 'liquidity/add', { agent_id: other, position: id, amount0: '1', amount1: '1' }),
      client.protocols.simulate(SLUG, 'liquidity/remove', { agent_id: other, position: '999999', percentage: 50 }),
    ];
    for (const p of attempts) {
      const e = await c.refusal(p);
      expect({ status: e.status, code: e.code, field: e.body.field }).toEqual({ status: 400, code: 'unknown_position', field: 'position' });
    }
  });

  it('refuses bad input with a 400 naming the field', async () => {
    const cases: [string, Json, string, string][] = [
      ['liquidity/add', { agent_id: agent, amount0: '1' }, 'missing_field', 'pool'],
      ['liquidity/add', { agent_id: agent, pool: 'USDC/WETH', fee: 3000 }, 'missing_field', 'amount0'],
      ['liquidity/add', { agent_id: agent, pool: 'USDC/WETH', amount0: '1' }, 'unknown_pool', 'fee'],
      ['liquidity/add', { agent_id: agent, pool: 'USDC/DAI', fee: 3000, amount0: '1' }, 'unknown_pool', 'pool'],
      ['liquidity/add', { agent_id: agent, pool: 'USDC/WETH', fee: 10000, amount0: '1' }, 'unknown_pool', 'fee'],
      ['liquidity/add', { agent_id: agent, pool: 'USDC/WETH', fee: 3000, amount0: '1', price_lower: '3500', price_upper: '2500' }, 'invalid_price', 'price_upper'],
      ['liquidity/add', { agent_id: agent, pool: 'USDC/WETH', fee: 3000, amount0: '1', price_lower: '2500' }, 'missing_field', 'price_upper'],
      ['liquidity/add', { agent_id: agent, position: '1', pool: 'USDC/WETH', amount0: '1' }, 'invalid_request_shape', 'pool'],
      ['liquidity/add', { agent_id: agent, pool: 'USDC/WETH', fee: 3000, amount0: '1', slippage_bps: 501 }, 'invalid_slippage', 'slippage_bps'],
      ['liquidity/add', { agent_id: agent, pool: 'USDC/WETH', fee: 3000, amount0: '-1' }, 'invalid_amount', 'amount0'],
      ['liquidity/add', { agent_id: agent, pool: 'USDC/WETH', fee: 3000, amount0: '1', amount1: '1', quote_token: 'USDT', price_lower: '1', price_upper: '2' }, 'unknown_token', 'quote_token'],
      ['liquidity/add', { agent_id: agent, pool: 'USDC/WETH', fee: 3000, amount0: '900000', amount1: '900000' }, 'insufficient_balance', usdcIs0 ? 'amount0' : 'amount1'],
      ['liquidity/remove', { agent_id: agent, position: '1', percentage: 0 }, 'invalid_percentage', 'percentage'],
      ['liquidity/remove', { agent_id: agent, position: 'x', percentage: 50 }, 'invalid_position', 'position'],
      ['liquidity/remove', { agent_id: agent, position: '1', percentage: 50, chain: 'arbitrum' }, 'unsupported_chain', 'chain'],
    ];
    for (const [action, body, code, field] of cases) {
      const e = await c.refusal(client.protocols.simulate(SLUG, action, body));
      expect({ action, body, status: e.status, code: e.code, field: e.body.field }).toEqual({ action, body, status: 400, code, field });
    }
  });

  it('every endpoint is protected: 401 without a key', async () => {
    const anonymous = createClient({ baseUrl: svc.url, apiKey: undefined, attempts: 1 });
    for (const path of ['liquidity/add/quote', 'liquidity/remove/quote']) expect((await c.refusal(anonymous.protocols.compute(SLUG, path, {}))).status).toBe(401);
    for (const action of ['liquidity/add', 'liquidity/remove']) expect((await c.refusal(anonymous.protocols.simulate(SLUG, action, {}))).status).toBe(401);
  });
});
