/**
 * What asking for outflows costs a simulation: the same simulate of the same calls with and without
 * `outflows` (one more RPC call, eth_simulateV1, in the same JSON-RPC batch as the estimate).
 * `npx vitest bench --run src/chain/simulateOutflows.bench.ts --outputJson out.json` (the JSON has the medians;
 * uses the run's devnet, or starts one). Figures only, no assertions on time.
 */
import { afterAll, bench, describe } from 'vitest';
import { encodeFunctionData, parseEther } from 'viem';
import { generatePrivateKey } from 'viem/accounts';
import { devnetChain, devnetPublicClient, devnetWalletClient } from '../devnet/clients.ts';
import { benchChain, freshSecret, incrementCall, uniqueId } from '../../test/support/chainUnderTest.ts';
import { createChainWorker } from './worker/index.ts';
import { testStablecoinAbi } from '../devnet/contracts.ts';
import type { Call } from '../api/v1alpha1/index.ts';

const devnet = await benchChain('base');
const { config, counter } = devnet;
const worker = await createChainWorker(config, { serviceSecret: freshSecret() });
const ref = { apiClient: 'bench', agentId: uniqueId('outflows') };
const { address } = await worker.resolveWallet(ref);
const usdc = config.tokens.find((t) => t.symbol === 'USDC')!.address;
// Gas for a fresh minter and native coin for the wallet by anvil_setBalance; USDC from its public mint.
const chain = devnetChain(config);
const client = devnetPublicClient(chain);
const minter = devnetWalletClient(chain, generatePrivateKey());
for (const a of [address, minter.account.address]) await client.request({ method: 'anvil_setBalance', params: [a, `0x${parseEther('1').toString(16)}`] } as never);
await client.waitForTransactionReceipt({ hash: await minter.writeContract({ address: usdc, abi: testStablecoinAbi, functionName: 'mint', args: [address, 1_000_000n] }) });
const sink = '0x000000000000000000000000000000000000dEaD';
// A batch that moves a token and native value out, and touches a contract.
const calls: Call[] = [
  { target: usdc, value: '0', data: encodeFunctionData({ abi: testStablecoinAbi, functionName: 'transfer', args: [sink, 1n] }) },
  { target: sink, value: '1', data: '0x' },
  incrementCall(counter),
];
const simulate = async (outflows: boolean) => {
  const r = await worker.simulate(ref, calls, { outflows });
  if (!r.ok || (outflows && r.value.outflows?.length !== 2)) throw new Error(`unexpected simulation: ${JSON.stringify(r, (_, v) => (typeof v === 'bigint' ? `${v}` : v))}`);
};
await simulate(true);

afterAll(async () => {
  await worker.close();
  await devnet.stop();
});

describe('simulate: with vs without outflows (undeployed wallet, 3-call batch)', () => {
  bench('simulate', () => simulate(false), { iterations: 20, time: 0, warmupIterations: 3 });
  bench('simulate with outflows', () => simulate(true), { iterations: 20, time: 0, warmupIterations: 3 });
});
