import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { parseEventLogs, type Hex } from 'viem';
import { entryPoint07Abi } from '../../abi.ts';
import { assertIncluded, chainUnderTest, counterAbi, freshSecret, incrementCall, outcomeRecorder, setNumberCall, uniqueId } from '../../../../test/support/chainUnderTest.ts';
import { startAlto, type AltoProcess } from '../../../../test/support/alto.ts';
import { createChainWorker, type LocalChainWorker } from '../../worker/index.ts';
import { createBundlerClient } from './client.ts';
import { until } from '../../../../test/support/until.ts';

// The chain worker with an outside bundler: the real Alto (test/alto) against the devnet's ethereum chain.
describe('RPC bundler: the chain worker through Alto (devnet)', () => {
  const base = chainUnderTest('ethereum');
  let alto: AltoProcess;
  let worker: LocalChainWorker;
  let outcomes: ReturnType<typeof outcomeRecorder>;

  beforeAll(async () => {
    alto = await startAlto('ethereum');
    worker = await createChainWorker({ ...base.config, executorKeys: [], bundler: alto.bundlerConfig() }, { serviceSecret: freshSecret() });
    outcomes = outcomeRecorder(worker);
  }, 90_000);
  afterAll(async () => {
    await worker?.close();
    await alto?.stop();
  });

  const count = () => base.client.readContract({ address: base.counter, abi: counterAbi, functionName: 'number' });

  it('a new wallet\'s first operation (with its deployment) is included by Alto\'s executor, priced at the bundler\'s preVerificationGas', async () => {
    const ref = { apiClient: 'acme', agentId: uniqueId('alto-first') };
    const op = await worker.prepareOperation(ref, [incrementCall(base.counter)], { requestId: 'r1' });
    expect(op.factory).toBeDefined();
    // The bundler's own price for this operation (now that it is signed: the same fields) is what it carries, or less.
    const { preVerificationGas } = await createBundlerClient({ url: alto.url, entryPoint: base.config.entryPoint }).estimateUserOperationGas(
      (await import('../../userOperation.ts')).fromSignedUserOperation(op),
    );
    expect(BigInt(op.preVerificationGas)).toBeGreaterThanOrEqual(preVerificationGas);

    const before = await count();
    await worker.submitOperation(op);
    const outcome = await outcomes.wait(op.hash);
    assertIncluded(outcome);
    expect(outcome.success).toBe(true);
    const tx = await base.client.getTransaction({ hash: outcome.txHash });
    expect(tx.from.toLowerCase()).toBe(alto.executor.toLowerCase());
    expect(await base.client.getCode({ address: op.sender as Hex })).not.toBe(undefined);
    expect(await count()).toBeGreaterThan(before);
    expect(worker.bundlerStats().includedOps).toBeGreaterThanOrEqual(1);
  });

  it('a quote (simulate) counts the preVerificationGas the bundler will ask, not the service\'s lower own', async () => {
    const ref = { apiClient: 'acme', agentId: uniqueId('alto-quote') };
    const sim = await worker.simulate(ref, [incrementCall(base.counter)]);
    if (!sim.ok) throw new Error(sim.error.message);
    const op = await worker.prepareOperation(ref, [incrementCall(base.counter)], { requestId: 'q1' });
    const signedGas = ['callGasLimit', 'verificationGasLimit', 'preVerificationGas', 'paymasterVerificationGasLimit', 'paymasterPostOpGasLimit']
      .map((k) => BigInt((op as unknown as Record<string, string>)[k] ?? '0'))
      .reduce((a, b) => a + b, 0n);
    // Within 2 % of what was signed (the same calls, the same undeployed wallet), not the service's own figure below it.
    expect(Number(sim.value.estimatedGas)).toBeGreaterThan(Number(signedGas) * 0.98);
    expect(BigInt(op.preVerificationGas)).toBeGreaterThan(20_000n); // Alto's price, not ours (≈ 19k for a first operation)
  });

  it('three operations of one wallet signed at once are handed on one at a time and included in nonce order', async () => {
    const ref = { apiClient: 'acme', agentId: uniqueId('alto-seq') };
    const ops = await Promise.all([0, 1, 2].map((i) => worker.prepareOperation(ref, [setNumberCall(base.counter, BigInt(7_000 + i))], { requestId: `s${i}` })));
    expect(ops.map((o) => o.nonce).sort()).toEqual(['0', '1', '2']);
    await Promise.all([...ops].reverse().map((op) => worker.submitOperation(op)));
    const included = await Promise.all(ops.map((op) => outcomes.wait(op.hash)));
    for (const o of included) assertIncluded(o);
    const receipts = await Promise.all([...new Set(included.map((o) => (o.state === 'included' ? o.txHash : '0x')))].map((hash) => base.client.getTransactionReceipt({ hash: hash as Hex })));
    const events = parseEventLogs({ abi: entryPoint07Abi, logs: receipts.flatMap((r) => r.logs), eventName: 'UserOperationEvent' })
      .filter((e) => e.args.sender === ops[0]!.sender)
      .sort((a, b) => Number(a.blockNumber! - b.blockNumber!) || a.logIndex! - b.logIndex!);
    expect(events.map((e) => e.args.nonce)).toEqual([0n, 1n, 2n]);
  });

  it('Alto killed with an operation in its mempool: the worker finds it unknown there, sends it again, and it runs once', async () => {
    const ref = { apiClient: 'acme', agentId: uniqueId('alto-kill') };
    // Deployed first, so the operation under test is a plain call.
    const first = await worker.prepareOperation(ref, [incrementCall(base.counter)], { requestId: 'k0' });
    await worker.submitOperation(first);
    assertIncluded(await outcomes.wait(first.hash));

    // With the bundler down, pricing an operation fails as the chain being unavailable: nothing is signed.
    await alto.kill();
    await expect(worker.prepareOperation(ref, [incrementCall(base.counter)], { requestId: 'k1' })).rejects.toMatchObject({ code: 'rpc_unavailable' });

    // Back in manual mode, Alto takes the operation and holds it in its (in-memory) mempool without bundling.
    await alto.restart('manual');
    const resentBefore = worker.bundlerStats().includedOps;
    const signed = await worker.prepareOperation(ref, [incrementCall(base.counter)], { requestId: 'k1' });
    await worker.submitOperation(signed);
    await until('Alto holds the operation', async () => ((await alto.knows(signed.hash)) ? true : undefined));
    await expect(worker.getOperationOutcome(signed)).resolves.toEqual({ state: 'pending' });
    // It dies with it and comes back empty (auto mode): the worker sees the operation unknown and sends it again.
    await alto.kill();
    await alto.restart('auto');
    const outcome = await outcomes.wait(signed.hash);
    assertIncluded(outcome);
    expect((worker.bundlerStats() as unknown as { resent: number }).resent).toBeGreaterThanOrEqual(1);
    expect(worker.bundlerStats().includedOps).toBe(resentBefore + 1);
    const logs = await base.client.getContractEvents({ address: base.config.entryPoint, abi: entryPoint07Abi, eventName: 'UserOperationEvent', args: { sender: signed.sender as Hex }, fromBlock: 0n });
    expect(logs.filter((l) => l.args.nonce === BigInt(signed.nonce))).toHaveLength(1);
  }, 120_000);

  it('an operation already handed on cannot be withdrawn: the kill switch answers sent and its outcome stands', async () => {
    const ref = { apiClient: 'acme', agentId: uniqueId('alto-withdraw') };
    const op = await worker.prepareOperation(ref, [incrementCall(base.counter)], { requestId: 'w1' });
    await worker.submitOperation(op);
    const outcome = await outcomes.wait(op.hash);
    assertIncluded(outcome);
    expect(await worker.withdrawOperation(op)).toEqual({ state: 'sent' });
  });
});

describe.each(['base', 'arbitrum'] as const)('RPC bundler on %s: Alto prices the L1 data fee too', (chain) => {
  it('the operation carries at least the preVerificationGas Alto asks, L1 part included, and is confirmed', async () => {
    const env = chainUnderTest(chain);
    const alto = await startAlto(chain);
    const worker = await createChainWorker({ ...env.config, executorKeys: [], bundler: alto.bundlerConfig() }, { serviceSecret: freshSecret() });
    try {
      const outcomes = outcomeRecorder(worker);
      const op = await worker.prepareOperation({ apiClient: 'acme', agentId: uniqueId(`alto-l2-${chain}`) }, [incrementCall(env.counter)], { requestId: 'l2' });
      const { fromSignedUserOperation } = await import('../../userOperation.ts');
      const asked = await createBundlerClient({ url: alto.url, entryPoint: env.config.entryPoint }).estimateUserOperationGas(fromSignedUserOperation(op));
      expect(BigInt(op.preVerificationGas)).toBeGreaterThanOrEqual(asked.preVerificationGas);
      await worker.submitOperation(op);
      const outcome = await outcomes.wait(op.hash);
      assertIncluded(outcome);
      expect(outcome.success).toBe(true);
    } finally {
      await worker.close();
      await alto.stop();
    }
  }, 90_000);
});
