/**
 * A simulation's outflows in the cluster layout: asked of a chain worker process over gRPC, as the controller
 * and gateway reach it there (src/chain/simulateOutflows.ts has the mechanism).
 */
import { readFileSync } from 'node:fs';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { encodeFunctionData, getAddress, parseEther } from 'viem';
import { parse } from 'yaml';
import { connectChainWorker, type RemoteChainWorker } from '../../src/chain/grpc/client.ts';
import { testStablecoinAbi } from '../../src/devnet/contracts.ts';
import { startTestCluster, type TestCluster } from '../support/cluster.ts';
import { uniqueId } from '../support/chainUnderTest.ts';

let cluster: TestCluster;
let worker: RemoteChainWorker;

beforeAll(async () => {
  cluster = await startTestCluster({ controllers: 1 });
  const config = parse(readFileSync(cluster.configPath, 'utf8')) as { chains: { name: string; worker: { address: string } }[] };
  worker = connectChainWorker('base', config.chains.find((c) => c.name === 'base')!.worker.address);
});
afterAll(async () => {
  await worker?.close();
  await cluster?.stop();
});

describe('simulate with outflows (cluster: the chain worker process over gRPC)', () => {
  it('lists a token transfer and native value out of the wallet, [] for a call that moves nothing, nothing unless asked', async () => {
    const base = cluster.devnet.chain('base');
    const client = cluster.devnet.publicClient('base');
    const funded = cluster.devnet.walletClient('base', 0);
    const usdc = base.tokens.find((t) => t.symbol === 'USDC')!.address;
    const ref = { apiClient: 'acme', agentId: uniqueId('outflows') };
    const { address } = await worker.resolveWallet(ref);
    await client.waitForTransactionReceipt({ hash: await funded.writeContract({ address: usdc, abi: testStablecoinAbi, functionName: 'mint', args: [address, 100n] }) });
    await client.waitForTransactionReceipt({ hash: await funded.sendTransaction({ to: address, value: parseEther('0.01') }) });
    const sink = getAddress('0x000000000000000000000000000000000000dEaD');
    const calls = [
      { target: usdc, value: '0', data: encodeFunctionData({ abi: testStablecoinAbi, functionName: 'transfer', args: [sink, 40n] }) },
      { target: sink, value: '9', data: '0x' as const },
    ];
    const r = await worker.simulate(ref, calls, { outflows: true });
    if (!r.ok) throw new Error(JSON.stringify(r.error));
    expect(r.value.outflows).toEqual([
      { kind: 'erc20', token: usdc, to: sink, amount: 40n },
      { kind: 'native', to: sink, amount: 9n },
    ]);
    const counter = { target: base.testContracts.counter, value: '0', data: encodeFunctionData({ abi: [{ type: 'function', name: 'increment', inputs: [], outputs: [], stateMutability: 'nonpayable' }], functionName: 'increment' }) };
    const none = await worker.simulate(ref, [counter], { outflows: true });
    expect(none.ok && none.value.outflows).toEqual([]);
    const plain = await worker.simulate(ref, calls);
    expect(plain.ok && 'outflows' in plain.value).toBe(false);
  });
});
