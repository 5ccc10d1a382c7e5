import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { encodeFunctionData, getAddress, parseEther, type Address, type Hex } from 'viem';
import { testStablecoinAbi } from '../devnet/contracts.ts';
import { poolAbi } from '../devnet/protocols/aaveV3/abis.ts';
import {
  assertIncluded,
  call,
  chainUnderTest,
  freshSecret,
  incrementCall,
  outcomeRecorder,
  uniqueId,
} from '../../test/support/chainUnderTest.ts';
import { encodeWalletCallData, toWalletCalls } from './calls.ts';
import type { ChainClient } from './client.ts';
import { simulateOutflows } from './simulateOutflows.ts';
import type { WalletRef } from './types.ts';
import { createChainWorker, type LocalChainWorker } from './worker/index.ts';

/**
 * Outflows of simulations on the devnet (anvil 1.7.1): eth_simulateV1 with traceTransfers, cross-checked
 * against the wallet's balance, debug_traceCall when the check fails. Ethereum: the chain with Aave v3.
 */
describe('simulate with outflows (devnet)', () => {
  const env = chainUnderTest('ethereum');
  const secret = freshSecret();
  let worker: LocalChainWorker;
  const usdc = env.config.tokens.find((t) => t.symbol === 'USDC')!.address;
  const pool = (env.config.protocols.aaveV3 as { pool: Address }).pool;
  const sink: Address = '0x000000000000000000000000000000000000dEaD';

  beforeAll(async () => {
    worker = await createChainWorker(env.config, { serviceSecret: secret });
  });
  afterAll(() => worker?.close());

  const send = async (tx: Promise<Hex>) => env.client.waitForTransactionReceipt({ hash: await tx });
  const mintUsdc = (to: Address, amount: bigint) => send(env.funded.writeContract({ address: usdc, abi: testStablecoinAbi, functionName: 'mint', args: [to, amount] }));
  const fund = (to: Address, value: bigint) => send(env.funded.sendTransaction({ to, value }));
  const freshWallet = async () => {
    const ref: WalletRef = { apiClient: 'acme', agentId: uniqueId('outflows') };
    return { ref, ...(await worker.resolveWallet(ref)) };
  };
  const transferCall = (to: Address, amount: bigint) => call(usdc, encodeFunctionData({ abi: testStablecoinAbi, functionName: 'transfer', args: [to, amount] }));

  it('an ERC-20 transfer out of an undeployed wallet; nothing computed unless asked', async () => {
    const w = await freshWallet();
    expect(w.deployed).toBe(false);
    await mintUsdc(w.address, 1_000_000n);
    const r = await worker.simulate(w.ref, [transferCall(sink, 250_000n)], { outflows: true });
    if (!r.ok) throw new Error(JSON.stringify(r.error));
    expect(r.value.outflows).toEqual([{ kind: 'erc20', token: usdc, to: getAddress(sink), amount: 250_000n, callIndex: 0 }]);
    const plain = await worker.simulate(w.ref, [transferCall(sink, 250_000n)]);
    expect(plain.ok && 'outflows' in plain.value).toBe(false);
  });

  it('native value to an EOA, and the same calls from the wallet once deployed', async () => {
    const w = await freshWallet();
    await fund(w.address, parseEther('1'));
    const calls = [call(sink, '0x', parseEther('0.25')), incrementCall(env.counter)];
    const expected = [{ kind: 'native', to: getAddress(sink), amount: parseEther('0.25') }]; // a batch: no callIndex
    const undeployed = await worker.simulate(w.ref, calls, { outflows: true });
    expect(undeployed.ok && undeployed.value.outflows).toEqual(expected);

    const outcomes = outcomeRecorder(worker);
    const op = await worker.prepareOperation(w.ref, [incrementCall(env.counter)], { requestId: uniqueId('deploy') });
    await worker.submitOperation(op);
    assertIncluded(await outcomes.wait(op.hash));
    expect((await worker.resolveWallet(w.ref)).deployed).toBe(true);
    const deployed = await worker.simulate(w.ref, calls, { outflows: true });
    expect(deployed.ok && deployed.value.outflows).toEqual(expected);
  });

  it('a protocol pulling the wallet tokens: approve + Aave v3 supply moves USDC to the aToken', async () => {
    const w = await freshWallet();
    await mintUsdc(w.address, 5_000_000n);
    const { aTokenAddress } = await env.client.readContract({ address: pool, abi: poolAbi, functionName: 'getReserveData', args: [usdc] });
    const r = await worker.simulate(
      w.ref,
      [
        call(usdc, encodeFunctionData({ abi: testStablecoinAbi, functionName: 'approve', args: [pool, 5_000_000n] })),
        call(pool, encodeFunctionData({ abi: poolAbi, functionName: 'supply', args: [usdc, 5_000_000n, w.address, 0] })),
      ],
      { outflows: true },
    );
    if (!r.ok) throw new Error(JSON.stringify(r.error));
    // The aToken minted to the wallet (a Transfer from 0x0) is an inflow, not listed.
    expect(r.value.outflows).toEqual([{ kind: 'erc20', token: usdc, to: aTokenAddress, amount: 5_000_000n }]);
  });

  it('a call that moves nothing out: []', async () => {
    const w = await freshWallet();
    const r = await worker.simulate(w.ref, [incrementCall(env.counter)], { outflows: true });
    expect(r.ok && r.value.outflows).toEqual([]);
  });

  it('a reverted inner call that sent value: its synthetic log does not count, whatever the node reports', async () => {
    // A bouncer: sends its call value back to its caller with its own calldata, ignores the result, stops.
    // Its calldata is the wallet's execute(), which reverts when not called by the EntryPoint: the value sent
    // back to the wallet moves in a frame that reverts. anvil 1.7.1 still logs that transfer, so the logs
    // disagree with the wallet's balance and the native outflows are taken from debug_traceCall.
    const runtime = '365f5f375f5f365f34335af15000';
    const hash = await env.funded.sendTransaction({ data: `0x600e600a5f39600e5ff3${runtime}` });
    const bouncer = getAddress((await env.client.waitForTransactionReceipt({ hash })).contractAddress!);
    const w = await freshWallet();
    await fund(w.address, parseEther('1'));
    const inner = encodeWalletCallData(toWalletCalls([incrementCall(env.counter)]));
    const calls = toWalletCalls([call(bouncer, inner, 5n)]);

    const methods: string[] = [];
    const recording = { ...env.client, request: (args: { method: string }) => (methods.push(args.method), env.client.request(args as never)) } as ChainClient;
    const r = await simulateOutflows(recording, {
      entryPoint: env.config.entryPoint,
      sender: w.address,
      deployed: false,
      implementationCode: async () => (await env.client.getCode({ address: await implementationOf(env.client, env.config.simpleAccountFactory) }))!,
      callData: encodeWalletCallData(calls),
      callCount: 1,
    });
    expect(r.ok && r.value).toEqual({ outflows: [{ kind: 'native', to: bouncer, amount: 5n, callIndex: 0 }] });
    expect(methods).toEqual(['eth_simulateV1', 'debug_traceCall']); // anvil 1.7.1's extra log was caught
    const viaWorker = await worker.simulate(w.ref, [call(bouncer, inner, 5n)], { outflows: true });
    expect(viaWorker.ok && viaWorker.value.outflows).toEqual([{ kind: 'native', to: bouncer, amount: 5n, callIndex: 0 }]);
  });
});

async function implementationOf(client: ChainClient, factory: Address): Promise<Address> {
  return client.readContract({
    address: factory,
    abi: [{ type: 'function', name: 'accountImplementation', stateMutability: 'view', inputs: [], outputs: [{ type: 'address' }] }],
    functionName: 'accountImplementation',
  });
}
