/**
 * The protocol families' latency, one agent per family, one request at a time, each beside the core endpoint it
 * builds on, measured in the same run on the same chain:
 * - GET .../position (batched on-chain reads of the protocol) beside GET /wallet/balance (the wallet's own reads);
 * - POST .../supply/simulate (plan, simulation, and the effects read before and after in one eth_call) beside
 *   POST /simulate of Counter.increment();
 * - POST .../supply → confirmed (an approval and the supply in one UserOperation) beside POST /execute of
 *   Counter.increment() → confirmed.
 */
import { encodeFunctionData, parseUnits, type Address, type Hex } from 'viem';
import { createClient, type AgentWalletClient } from '../src/client/index.ts';
import type { ChainName } from '../src/config/chains.ts';
import { devnetChain, devnetWalletClient } from '../src/devnet/clients.ts';
import { counterAbi, testStablecoinAbi } from '../src/devnet/contracts.ts';
import type { DevnetManifest } from '../src/devnet/manifest.ts';
import { fmt, pct } from './load.ts';

export interface ProtocolBenchTarget {
  url: string;
  /** A sponsored key. */
  apiKey: string;
  manifest: DevnetManifest;
  /** Private key of a funded devnet account: it mints each agent's USDC. */
  funderKey: Hex;
}

/** Each family's supply of 1 USDC (lend-c names its market, found by its first read). */
const FAMILIES: { slug: string; chain: ChainName; supply(client: AgentWalletClient): Promise<Record<string, string>> }[] = [
  { slug: 'lend-a-v3', chain: 'ethereum', supply: async () => ({ token: 'USDC', amount: '1' }) },
  { slug: 'lend-b-v3', chain: 'base', supply: async () => ({ token: 'USDC', amount: '1' }) },
  {
    slug: 'lend-c',
    chain: 'base',
    async supply(client) {
      const r = await client.protocols.read<{ markets: { id: string }[] }>('lend-c', 'markets');
      if (!r.ok) throw r.error;
      return { market: r.value.markets[0]!.id, amount: '1' };
    },
  },
];

export interface ProtocolLatency {
  slug: string;
  chain: ChainName;
  position: number[];
  walletBalance: number[];
  simulate: number[];
  coreSimulate: number[];
  execute: number[];
  coreExecute: number[];
}

export const timed = async <T>(xs: number[], f: () => Promise<T>): Promise<T> => {
  const t0 = performance.now();
  const v = await f();
  xs.push(performance.now() - t0);
  return v;
};

/** The value of an answer the benchmark needs; a refusal ends the run. */
export const valueOf = <T>(r: { ok: true; value: T } | { ok: false; error: unknown }): T => {
  if (!r.ok) throw r.error;
  return r.value;
};

export async function measureProtocols(t: ProtocolBenchTarget, n: number): Promise<ProtocolLatency[]> {
  const client = createClient({ baseUrl: t.url, apiKey: t.apiKey, attempts: 1 });
  const confirm = async (requestId: string) => {
    const done = valueOf(await client.waitForTerminal(requestId, { minIntervalMs: 5, maxIntervalMs: 5, timeoutMs: 60_000 }));
    if (done.status !== 'confirmed') throw new Error(`${requestId} ended ${done.status}`);
  };
  const out: ProtocolLatency[] = [];
  for (const f of FAMILIES) {
    const chain = t.manifest.chains.find((c) => c.name === f.chain)!;
    const agentId = `bench-${f.slug}`;
    const wallet = valueOf(await client.wallet(agentId, f.chain)).smart_wallet_address as Address;
    const usdc = chain.tokens.find((x) => x.symbol === 'USDC')!;
    const funder = devnetWalletClient(devnetChain(chain), t.funderKey);
    await funder.writeContractSync({ address: usdc.address, abi: testStablecoinAbi, functionName: 'mint', args: [wallet, parseUnits(String(n + 10), usdc.decimals)] });
    const counter = { agent_id: agentId, chain: f.chain, target_contract: chain.testContracts.counter, calldata: encodeFunctionData({ abi: counterAbi, functionName: 'increment' }) };
    await confirm(valueOf(await client.execute(counter)).request_id); // deploys the wallet: not measured
    const supply = { agent_id: agentId, ...(await f.supply(client)) };
    const r: ProtocolLatency = { slug: f.slug, chain: f.chain, position: [], walletBalance: [], simulate: [], coreSimulate: [], execute: [], coreExecute: [] };
    for (let i = 0; i < n; i++) {
      valueOf(await timed(r.position, () => client.protocols.read(f.slug, 'position', { agent_id: agentId })));
      valueOf(await timed(r.walletBalance, () => client.balance(agentId, f.chain)));
      valueOf(await timed(r.simulate, () => client.protocols.simulate(f.slug, 'supply', supply)));
      valueOf(await timed(r.coreSimulate, () => client.simulate(counter)));
      await timed(r.execute, async () => confirm(valueOf(await client.protocols.execute(f.slug, 'supply', supply)).request_id));
      await timed(r.coreExecute, async () => confirm(valueOf(await client.execute(counter)).request_id));
    }
    out.push(r);
  }
  return out;
}

export function printProtocols(rs: ProtocolLatency[]): void {
  const p50 = (xs: number[]) => fmt(pct(xs, 50));
  const p99 = (xs: number[]) => fmt(pct(xs, 99));
  console.log(`protocol families, one agent each, ${rs[0]?.position.length ?? 0} sequential rounds (p50 / p99; beside each, the core endpoint of the same run):`);
  for (const r of rs) {
    console.log(`  ${r.slug} (${r.chain}):`);
    console.log(`    GET position ${p50(r.position)} / ${p99(r.position)}    GET /wallet/balance ${p50(r.walletBalance)} / ${p99(r.walletBalance)}`);
    console.log(`    POST supply/simulate (with effects) ${p50(r.simulate)} / ${p99(r.simulate)}    POST /simulate ${p50(r.coreSimulate)} / ${p99(r.coreSimulate)}`);
    console.log(`    POST supply → confirmed ${p50(r.execute)} / ${p99(r.execute)}    POST /execute → confirmed ${p50(r.coreExecute)} / ${p99(r.coreExecute)}`);
  }
}
