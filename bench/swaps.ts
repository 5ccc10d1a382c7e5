/**
 * The exchange families' latency and gas, one agent per family, one request at a time, each beside the core
 * endpoint it builds on, measured in the same run on the same chain:
 * - POST .../swap/quote (the protocol's quoter in an eth_call) beside POST /simulate of Counter.increment();
 * - POST .../swap/simulate (plan, quote, simulation with the balances read before and after) beside the same;
 * - POST .../swap → confirmed (the approval and the swap in one UserOperation, re-planned at signing) beside
 *   POST /execute of Counter.increment() → confirmed;
 * - the gas of the swap's UserOperation beside the same swap sent by an EOA straight to the router (its approval
 *   and its swap, two transactions), so what the smart wallet and the batch add is visible.
 */
import { encodeFunctionData, erc20Abi, parseUnits, type Address, type Hex } from 'viem';
import { createClient } from '../src/client/index.ts';
import { devnetChain, devnetPublicClient, devnetWalletClient } from '../src/devnet/clients.ts';
import { counterAbi, testStablecoinAbi } from '../src/devnet/contracts.ts';
import type { DevnetChain, DevnetManifest } from '../src/devnet/manifest.ts';
import { swapRouter02Abi } from '../src/protocols/uniswapV3/abi.ts';
import { fmt, pct } from './load.ts';
import { timed, valueOf } from './protocols.ts';

export interface SwapBenchTarget {
  url: string;
  /** A sponsored key. */
  apiKey: string;
  manifest: DevnetManifest;
  /** Private key of a funded devnet account: it mints the agents' USDC and sends the direct swaps. */
  funderKey: Hex;
}

export interface SwapLatency {
  slug: string;
  quote: number[];
  simulate: number[];
  coreSimulate: number[];
  execute: number[];
  coreExecute: number[];
  /** Gas used by the service's swap UserOperations, and by the direct transactions (approvals and swap) per round. */
  gasService: bigint[];
  gasDirect: bigint[][];
}

const SWAP_USDC = '10';

type Funder = ReturnType<typeof devnetWalletClient>;

/** Each family's swap of SWAP_USDC USDC, and the same swap sent by an EOA straight to the protocol (its gas, per transaction). */
const FAMILIES: { slug: string; ask: Record<string, string | number>; direct(funder: Funder, chain: DevnetChain, planned: PlannedCall[]): Promise<bigint[]> }[] = [
  {
    slug: 'pool-a-v3',
    ask: { token_in: 'USDC', token_out: 'WETH', amount_in: SWAP_USDC, fee: 500 },
    // Its exact approval, then the router's multicall(deadline, [exactInputSingle]) to the EOA.
    async direct(funder, chain) {
      const v3 = chain.protocols!.uniswapV3!;
      const usdc = chain.tokens.find((x) => x.symbol === 'USDC')!;
      const weth = chain.tokens.find((x) => x.symbol === 'WETH')!;
      const each = parseUnits(SWAP_USDC, usdc.decimals);
      const approve = await funder.writeContractSync({ address: usdc.address, abi: erc20Abi, functionName: 'approve', args: [v3.swapRouter02, each] });
      const deadline = (await devnetPublicClient(devnetChain(chain)).getBlock()).timestamp + 600n;
      const single = encodeFunctionData({
        abi: swapRouter02Abi,
        functionName: 'exactInputSingle',
        args: [{ tokenIn: usdc.address, tokenOut: weth.address, fee: 500, recipient: funder.account.address, amountIn: each, amountOutMinimum: 0n, sqrtPriceLimitX96: 0n }],
      });
      const swap = await funder.writeContractSync({ address: v3.swapRouter02, abi: swapRouter02Abi, functionName: 'multicall', args: [deadline, [single]] });
      return [approve.gasUsed, swap.gasUsed];
    },
  },
  {
    slug: 'pool-b-v4',
    ask: { token_in: 'USDC', token_out: 'USDT', amount_in: SWAP_USDC },
    // The very calls the service planned (ERC-20 approval of Permit2, Permit2's allowance to the router, the
    // router's V4_SWAP), each sent by the EOA: the router pays out to its caller, so the EOA gets the output.
    async direct(funder, _chain, planned) {
      const gas: bigint[] = [];
      for (const c of planned) gas.push((await funder.sendTransactionSync({ to: c.target_contract as Address, data: c.calldata as Hex, value: BigInt(c.value) })).gasUsed);
      return gas;
    },
  },
];

interface PlannedCall {
  target_contract: string;
  calldata: string;
  value: string;
}

export async function measureSwaps(t: SwapBenchTarget, n: number): Promise<SwapLatency[]> {
  const client = createClient({ baseUrl: t.url, apiKey: t.apiKey, attempts: 1 });
  const chain = t.manifest.chains.find((c) => c.name === 'ethereum')!;
  const usdc = chain.tokens.find((x) => x.symbol === 'USDC')!;
  const funder = devnetWalletClient(devnetChain(chain), t.funderKey);
  const confirm = async (requestId: string) => {
    const done = valueOf(await client.waitForTerminal(requestId, { minIntervalMs: 5, maxIntervalMs: 5, timeoutMs: 60_000 }));
    if (done.status !== 'confirmed') throw new Error(`${requestId} ended ${done.status}`);
    return done;
  };
  const each = parseUnits(SWAP_USDC, usdc.decimals);
  const out: SwapLatency[] = [];
  for (const f of FAMILIES) {
    const agentId = `bench-${f.slug}`;
    const wallet = valueOf(await client.wallet(agentId, 'ethereum')).smart_wallet_address as Address;
    await funder.writeContractSync({ address: usdc.address, abi: testStablecoinAbi, functionName: 'mint', args: [wallet, each * BigInt(2 * n + 4)] });
    await funder.writeContractSync({ address: usdc.address, abi: testStablecoinAbi, functionName: 'mint', args: [funder.account.address, each * BigInt(n + 2)] });
    const counter = { agent_id: agentId, chain: 'ethereum' as const, target_contract: chain.testContracts.counter, calldata: encodeFunctionData({ abi: counterAbi, functionName: 'increment' }) };
    await confirm(valueOf(await client.execute(counter)).request_id); // deploys the wallet: not measured
    const r: SwapLatency = { slug: f.slug, quote: [], simulate: [], coreSimulate: [], execute: [], coreExecute: [], gasService: [], gasDirect: [] };
    for (let i = 0; i < n; i++) {
      valueOf(await timed(r.quote, () => client.protocols.compute(f.slug, 'swap/quote', f.ask)));
      const sim = valueOf(await timed(r.simulate, () => client.protocols.simulate<{ calls: PlannedCall[] }>(f.slug, 'swap', { agent_id: agentId, ...f.ask })));
      valueOf(await timed(r.coreSimulate, () => client.simulate(counter)));
      const done = await timed(r.execute, async () => confirm(valueOf(await client.protocols.execute(f.slug, 'swap', { agent_id: agentId, ...f.ask })).request_id));
      r.gasService.push(BigInt(done.gas_used ?? 0));
      await timed(r.coreExecute, async () => confirm(valueOf(await client.execute(counter)).request_id));
      r.gasDirect.push(await f.direct(funder, chain, sim.calls));
    }
    out.push(r);
  }
  return out;
}

export function printSwaps(rs: SwapLatency[]): void {
  const p50 = (xs: number[]) => fmt(pct(xs, 50));
  const p99 = (xs: number[]) => fmt(pct(xs, 99));
  const median = (xs: bigint[]) => [...xs].sort((a, b) => (a < b ? -1 : a > b ? 1 : 0))[Math.floor(xs.length / 2)] ?? 0n;
  console.log(`exchange families, one agent each, ${rs[0]?.quote.length ?? 0} sequential rounds of a ${SWAP_USDC} USDC swap (pool-a-v3 to WETH, pool-b-v4 to USDT) (p50 / p99; beside each, the core endpoint of the same run):`);
  for (const r of rs) {
    console.log(`  ${r.slug} (ethereum):`);
    console.log(`    POST swap/quote ${p50(r.quote)} / ${p99(r.quote)}    POST swap/simulate (with effects) ${p50(r.simulate)} / ${p99(r.simulate)}    POST /simulate ${p50(r.coreSimulate)} / ${p99(r.coreSimulate)}`);
    console.log(`    POST swap → confirmed ${p50(r.execute)} / ${p99(r.execute)}    POST /execute → confirmed ${p50(r.coreExecute)} / ${p99(r.coreExecute)}`);
    const service = median(r.gasService);
    const parts = r.gasDirect[0]!.map((_, i) => median(r.gasDirect.map((round) => round[i]!)));
    const direct = parts.reduce((a, b) => a + b, 0n);
    console.log(
      `    gas (median): the service's UserOperation (approvals + swap, wallet and paymaster included) ${service}    ` +
        `an EOA straight to the protocol, one transaction per call: ${parts.join(' + ')} = ${direct} (service / direct ${(Number(service) / Number(direct)).toFixed(2)}×)`,
    );
  }
}
