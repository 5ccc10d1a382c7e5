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
import type { DevnetManifest } from '../src/devnet/manifest.ts';
import { swapRouter02Abi } from '../src/protocols/uniswapV3/abi.ts';
import { fmt, pct } from './load.ts';

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
  /** Gas used by the service's swap UserOperations, and by the direct approval + swap transactions. */
  gasService: bigint[];
  gasDirectApprove: bigint[];
  gasDirectSwap: bigint[];
}

const SWAP_USDC = '10';

const timed = async <T>(xs: number[], f: () => Promise<T>): Promise<T> => {
  const t0 = performance.now();
  const v = await f();
  xs.push(performance.now() - t0);
  return v;
};

const valueOf = <T>(r: { ok: true; value: T } | { ok: false; error: unknown }): T => {
  if (!r.ok) throw r.error;
  return r.value;
};

export async function measureSwaps(t: SwapBenchTarget, n: number): Promise<SwapLatency[]> {
  const client = createClient({ baseUrl: t.url, apiKey: t.apiKey, attempts: 1 });
  const chain = t.manifest.chains.find((c) => c.name === 'ethereum')!;
  const v3 = chain.protocols?.uniswapV3;
  if (!v3) throw new Error('the devnet has no Uniswap v3 on ethereum');
  const usdc = chain.tokens.find((x) => x.symbol === 'USDC')!;
  const weth = chain.tokens.find((x) => x.symbol === 'WETH')!;
  const funder = devnetWalletClient(devnetChain(chain), t.funderKey);
  const publicClient = devnetPublicClient(devnetChain(chain));
  const confirm = async (requestId: string) => {
    const done = valueOf(await client.waitForTerminal(requestId, { minIntervalMs: 5, maxIntervalMs: 5, timeoutMs: 60_000 }));
    if (done.status !== 'confirmed') throw new Error(`${requestId} ended ${done.status}`);
    return done;
  };

  const agentId = 'bench-pool-a-v3';
  const wallet = valueOf(await client.wallet(agentId, 'ethereum')).smart_wallet_address as Address;
  const each = parseUnits(SWAP_USDC, usdc.decimals);
  await funder.writeContractSync({ address: usdc.address, abi: testStablecoinAbi, functionName: 'mint', args: [wallet, each * BigInt(2 * n + 4)] });
  await funder.writeContractSync({ address: usdc.address, abi: testStablecoinAbi, functionName: 'mint', args: [funder.account.address, each * BigInt(n + 2)] });
  const counter = { agent_id: agentId, chain: 'ethereum' as const, target_contract: chain.testContracts.counter, calldata: encodeFunctionData({ abi: counterAbi, functionName: 'increment' }) };
  await confirm(valueOf(await client.execute(counter)).request_id); // deploys the wallet: not measured
  const ask = { token_in: 'USDC', token_out: 'WETH', amount_in: SWAP_USDC, fee: 500 };
  const r: SwapLatency = { slug: 'pool-a-v3', quote: [], simulate: [], coreSimulate: [], execute: [], coreExecute: [], gasService: [], gasDirectApprove: [], gasDirectSwap: [] };
  for (let i = 0; i < n; i++) {
    valueOf(await timed(r.quote, () => client.protocols.compute('pool-a-v3', 'swap/quote', ask)));
    valueOf(await timed(r.simulate, () => client.protocols.simulate('pool-a-v3', 'swap', { agent_id: agentId, ...ask })));
    valueOf(await timed(r.coreSimulate, () => client.simulate(counter)));
    const done = await timed(r.execute, async () => confirm(valueOf(await client.protocols.execute('pool-a-v3', 'swap', { agent_id: agentId, ...ask })).request_id));
    r.gasService.push(BigInt(done.gas_used ?? 0));
    await timed(r.coreExecute, async () => confirm(valueOf(await client.execute(counter)).request_id));
    // The same swap from an EOA straight to SwapRouter02: its exact approval, then the router's multicall(deadline, [exactInputSingle]).
    const approve = await funder.writeContractSync({ address: usdc.address, abi: erc20Abi, functionName: 'approve', args: [v3.swapRouter02, each] });
    const deadline = (await publicClient.getBlock()).timestamp + 600n;
    const single = encodeFunctionData({
      abi: swapRouter02Abi,
      functionName: 'exactInputSingle',
      args: [{ tokenIn: usdc.address, tokenOut: weth.address, fee: 500, recipient: funder.account.address, amountIn: each, amountOutMinimum: 0n, sqrtPriceLimitX96: 0n }],
    });
    const swap = await funder.writeContractSync({ address: v3.swapRouter02, abi: swapRouter02Abi, functionName: 'multicall', args: [deadline, [single]] });
    r.gasDirectApprove.push(approve.gasUsed);
    r.gasDirectSwap.push(swap.gasUsed);
  }
  return [r];
}

export function printSwaps(rs: SwapLatency[]): void {
  const p50 = (xs: number[]) => fmt(pct(xs, 50));
  const p99 = (xs: number[]) => fmt(pct(xs, 99));
  const median = (xs: bigint[]) => [...xs].sort((a, b) => (a < b ? -1 : a > b ? 1 : 0))[Math.floor(xs.length / 2)] ?? 0n;
  console.log(`exchange families, one agent each, ${rs[0]?.quote.length ?? 0} sequential rounds of a ${SWAP_USDC} USDC → WETH swap (p50 / p99; beside each, the core endpoint of the same run):`);
  for (const r of rs) {
    console.log(`  ${r.slug} (ethereum):`);
    console.log(`    POST swap/quote ${p50(r.quote)} / ${p99(r.quote)}    POST swap/simulate (with effects) ${p50(r.simulate)} / ${p99(r.simulate)}    POST /simulate ${p50(r.coreSimulate)} / ${p99(r.coreSimulate)}`);
    console.log(`    POST swap → confirmed ${p50(r.execute)} / ${p99(r.execute)}    POST /execute → confirmed ${p50(r.coreExecute)} / ${p99(r.coreExecute)}`);
    const service = median(r.gasService);
    const direct = median(r.gasDirectApprove) + median(r.gasDirectSwap);
    console.log(
      `    gas (median): the service's UserOperation (approval + swap, wallet and paymaster included) ${service}    ` +
        `an EOA straight to the router: approval ${median(r.gasDirectApprove)} + swap ${median(r.gasDirectSwap)} = ${direct} (service / direct ${(Number(service) / Number(direct)).toFixed(2)}×)`,
    );
  }
}
