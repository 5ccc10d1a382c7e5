/**
 * perp-v2's two phases, measured per order in the same run on the devnet's GMX (arbitrum): one agent, N market
 * orders one at a time, alternately opening a $1,000 long on $200 of USDC and closing it (`size_usd: "max"`), so the
 * position stays small. For each order, from the POST .../orders call, as its waiting GETs see it (the client's
 * waitForTerminal: `GET /status/:id?wait=…&known_status=…`, which for an order waits on until the keeper settled it):
 * - execute → confirmed: the create's inclusion (status `confirmed`, its order `pending` or already settled);
 * - execute → executed: status.order.state `executed` (the keeper's execution, found by the service's follower);
 * printed beside the devnet keeper's configured delay, the same figures net of it, and the run's plain
 * execute → confirmed (bench/run.ts). The create's gas (its UserOperation, from the status record) is printed
 * beside the swaps' of the same run (bench/swaps.ts).
 */
import { encodeFunctionData, parseEther, parseUnits, type Address, type Hex } from 'viem';
import { createClient } from '../src/client/index.ts';
import { devnetChain, devnetWalletClient } from '../src/devnet/clients.ts';
import { counterAbi, testStablecoinAbi } from '../src/devnet/contracts.ts';
import type { DevnetManifest } from '../src/devnet/manifest.ts';
import { fmt, pct } from './load.ts';
import { valueOf } from './protocols.ts';
import type { SwapLatency } from './swaps.ts';
import { ORDER_POLL_MS } from '../src/controller/orders/index.ts';

export interface PerpBenchTarget {
  url: string;
  /** A sponsored key. */
  apiKey: string;
  manifest: DevnetManifest;
  /** Private key of a funded devnet account on arbitrum: it mints the agent's USDC and sends its ETH. */
  funderKey: Hex;
}

const SLUG = 'perp-v2';
const SIZE_USD = '1000';
const COLLATERAL_USDC = '200';
const OPEN = { type: 'market_increase', market: 'ETH', side: 'long', size_usd: SIZE_USD, collateral_token: 'USDC', collateral_amount: COLLATERAL_USDC };
const CLOSE = { type: 'market_decrease', market: 'ETH', side: 'long', size_usd: 'max', collateral_token: 'USDC' };

export interface PerpLatency {
  /** execute → confirmed (the create's inclusion), and execute → order executed, per order, ms. */
  confirmed: number[];
  executed: number[];
  /** Gas of the create's UserOperation, opens and closes apart (an open also approves the collateral). */
  gasOpen: bigint[];
  gasClose: bigint[];
}

export async function measurePerp(t: PerpBenchTarget, n: number): Promise<PerpLatency> {
  const client = createClient({ baseUrl: t.url, apiKey: t.apiKey, attempts: 1 });
  const chain = t.manifest.chains.find((c) => c.name === 'arbitrum')!;
  const usdc = chain.tokens.find((x) => x.symbol === 'USDC')!;
  const funder = devnetWalletClient(devnetChain(chain), t.funderKey);
  const agentId = 'bench-perp-v2';
  const wallet = valueOf(await client.wallet(agentId, 'arbitrum')).smart_wallet_address as Address;
  // Each open locks $200 of collateral its close gives back less fees; each order carries its execution fee in ETH.
  await funder.writeContractSync({ address: usdc.address, abi: testStablecoinAbi, functionName: 'mint', args: [wallet, parseUnits(COLLATERAL_USDC, usdc.decimals) * BigInt(n + 4)] });
  await funder.sendTransactionSync({ to: wallet, value: parseEther('2') });
  const counter = { agent_id: agentId, chain: 'arbitrum' as const, target_contract: chain.testContracts.counter, calldata: encodeFunctionData({ abi: counterAbi, functionName: 'increment' }) };
  const deployed = valueOf(await client.waitForTerminal(valueOf(await client.execute(counter)).request_id, { minIntervalMs: 5, maxIntervalMs: 5, timeoutMs: 60_000 }));
  if (deployed.status !== 'confirmed') throw new Error(`the wallet's deployment ended ${deployed.status}`); // not measured

  const r: PerpLatency = { confirmed: [], executed: [], gasOpen: [], gasClose: [] };
  for (let i = 0; i < n; i++) {
    const open = i % 2 === 0;
    const t0 = performance.now();
    const id = valueOf(await client.protocols.execute(SLUG, 'orders', { agent_id: agentId, ...(open ? OPEN : CLOSE) })).request_id;
    let confirmedAt: number | undefined;
    const done = valueOf(
      await client.waitForTerminal(id, {
        minIntervalMs: 5,
        maxIntervalMs: 5,
        timeoutMs: 60_000,
        onStatus: (s) => {
          if (s.status === 'confirmed' && confirmedAt === undefined) confirmedAt = performance.now();
        },
      }),
    );
    const executedAt = performance.now();
    if (done.status !== 'confirmed' || done.order?.state !== 'executed') throw new Error(`${id} ended ${done.status}, its order ${JSON.stringify(done.order)}`);
    r.confirmed.push(confirmedAt! - t0);
    r.executed.push(executedAt - t0);
    (open ? r.gasOpen : r.gasClose).push(BigInt(done.gas_used ?? 0));
  }
  // An odd N leaves the last long open: close it, unmeasured, so the devnet's market ends as it began.
  if (n % 2 === 1) {
    const id = valueOf(await client.protocols.execute(SLUG, 'orders', { agent_id: agentId, ...CLOSE })).request_id;
    valueOf(await client.waitForTerminal(id, { minIntervalMs: 5, maxIntervalMs: 5, timeoutMs: 60_000 }));
  }
  return r;
}

const median = (xs: bigint[]) => [...xs].sort((a, b) => (a < b ? -1 : a > b ? 1 : 0))[Math.floor(xs.length / 2)] ?? 0n;

/**
 * `keeperDelayMs` is the delay the bench's devnet keeper was started with; `plain` the run's execute → confirmed
 * (bench/run.ts: one agent on ethereum, seen through a store watch); `swaps` the same run's swaps, for their gas.
 */
export function printPerp(r: PerpLatency, keeperDelayMs: number, plain: number[], swaps: SwapLatency[]): void {
  const both = (xs: number[]) => `${fmt(pct(xs, 50))} / ${fmt(pct(xs, 95))}`;
  const net = (xs: number[]) => xs.map((x) => x - keeperDelayMs);
  const between = r.executed.map((x, i) => x - r.confirmed[i]!);
  console.log(
    `perp-v2 (arbitrum, the devnet's GMX), one agent, ${r.executed.length} sequential market orders alternating a $${SIZE_USD} long on $${COLLATERAL_USDC} USDC and its close ` +
      `(p50 / p95; the devnet keeper's configured delay ${keeperDelayMs} ms, its poll 200 ms; the service's order follower looks every ${ORDER_POLL_MS} ms):`,
  );
  console.log(`    POST orders → confirmed (the create's inclusion) ${both(r.confirmed)}    reference, the run's POST /execute → confirmed (ethereum) ${both(plain)}`);
  console.log(`    POST orders → order executed ${both(r.executed)}    net of the keeper's delay ${both(net(r.executed))}`);
  console.log(`    confirmed → order executed ${both(between)}    net of the keeper's delay ${both(net(between))}`);
  const swapGas = swaps.map((s) => `${s.slug} ${median(s.gasService)}`).join(', ');
  console.log(
    `    gas of the create's UserOperation (median): open (USDC approval + multicall sendWnt, sendTokens, createOrder) ${median(r.gasOpen)}, ` +
      `close (multicall sendWnt, createOrder) ${median(r.gasClose)}    reference, a swap's in the same run (approvals + swap): ${swapGas}`,
  );
}
