import { createServer, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
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

  /**
   * A bouncer: sends its call value back to its caller with its own calldata, ignores the result, stops. With
   * the wallet's execute() as calldata, which reverts when the EntryPoint is not the caller, the value sent
   * back to the wallet moves in a frame that reverts. anvil 1.7.1 still logs that transfer.
   */
  const bouncerCase = async () => {
    const runtime = '365f5f375f5f365f34335af15000';
    const hash = await env.funded.sendTransaction({ data: `0x600e600a5f39600e5ff3${runtime}` });
    const bouncer = getAddress((await env.client.waitForTransactionReceipt({ hash })).contractAddress!);
    const w = await freshWallet();
    await fund(w.address, parseEther('1'));
    const inner = encodeWalletCallData(toWalletCalls([incrementCall(env.counter)]));
    return { bouncer, w, bounce: call(bouncer, inner, 5n) };
  };

  it('a reverted inner call that sent value: its synthetic log does not count, whatever the node reports', async () => {
    // The logs disagree with the wallet's balance, so the native outflows are taken from debug_traceCall.
    const { bouncer, w, bounce } = await bouncerCase();
    const calls = toWalletCalls([bounce]);

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
    const viaWorker = await worker.simulate(w.ref, [bounce], { outflows: true });
    expect(viaWorker.ok && viaWorker.value.outflows).toEqual([{ kind: 'native', to: bouncer, amount: 5n, callIndex: 0 }]);
  });

  describe('on an RPC endpoint without a method (a node in front of the devnet that answers -32601 for it)', () => {
    let proxy: Server;
    let lacking: LocalChainWorker;
    const missing = new Set<string>();
    beforeAll(async () => {
      proxy = createServer(async (req, res) => {
        const chunks: Buffer[] = [];
        for await (const c of req) chunks.push(c as Buffer);
        const body = JSON.parse(Buffer.concat(chunks).toString()) as Rpc | Rpc[];
        const answer = async (r: Rpc) => {
          if (missing.has(r.method)) return { jsonrpc: '2.0', id: r.id, error: { code: -32601, message: `the method ${r.method} does not exist/is not available` } };
          const upstream = await fetch(env.config.rpcUrl, { method: 'POST', headers: { 'content-type': 'application/json' }, body: JSON.stringify(r) });
          return upstream.json();
        };
        const out = Array.isArray(body) ? await Promise.all(body.map(answer)) : await answer(body);
        res.writeHead(200, { 'content-type': 'application/json' }).end(JSON.stringify(out));
      });
      await new Promise<void>((r) => proxy.listen(0, '127.0.0.1', r));
      lacking = await createChainWorker({ ...env.config, rpcUrl: `http://127.0.0.1:${(proxy.address() as AddressInfo).port}` }, { serviceSecret: secret });
    });
    afterAll(async () => {
      await lacking?.close();
      proxy?.closeAllConnections();
      await new Promise((r) => proxy?.close(r));
    });

    it('no eth_simulateV1: the simulation succeeds, outflows absent, outflowsUnavailable says rpc_unsupported', async () => {
      missing.clear();
      missing.add('eth_simulateV1');
      const w = await freshWallet();
      await mintUsdc(w.address, 10n);
      const r = await lacking.simulate(w.ref, [transferCall(sink, 1n)], { outflows: true });
      if (!r.ok) throw new Error(JSON.stringify(r.error));
      expect('outflows' in r.value).toBe(false);
      expect(r.value.outflowsUnavailable).toMatchObject({ code: 'rpc_unsupported', message: expect.stringContaining('eth_simulateV1') });
      const plain = await lacking.simulate(w.ref, [transferCall(sink, 1n)]);
      expect(plain.ok && 'outflowsUnavailable' in plain.value).toBe(false); // not asked, not tried
    });

    it('no debug_traceCall: fine while the native logs agree with the balance, rpc_unsupported when they do not', async () => {
      missing.clear();
      missing.add('debug_traceCall');
      const w = await freshWallet();
      await fund(w.address, parseEther('1'));
      const agree = await lacking.simulate(w.ref, [call(sink, '0x', 7n)], { outflows: true });
      expect(agree.ok && agree.value.outflows).toEqual([{ kind: 'native', to: getAddress(sink), amount: 7n, callIndex: 0 }]);
      const { w: w2, bounce } = await bouncerCase();
      const disagree = await lacking.simulate(w2.ref, [bounce], { outflows: true });
      if (!disagree.ok) throw new Error(JSON.stringify(disagree.error));
      expect('outflows' in disagree.value).toBe(false);
      expect(disagree.value.outflowsUnavailable).toMatchObject({ code: 'rpc_unsupported', message: expect.stringContaining('debug_traceCall') });
    });
  });
});

type Rpc = { jsonrpc: '2.0'; id: number; method: string; params?: unknown[] };

async function implementationOf(client: ChainClient, factory: Address): Promise<Address> {
  return client.readContract({
    address: factory,
    abi: [{ type: 'function', name: 'accountImplementation', stateMutability: 'view', inputs: [], outputs: [{ type: 'address' }] }],
    functionName: 'accountImplementation',
  });
}
