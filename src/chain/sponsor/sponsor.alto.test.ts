import { parseEventLogs, type Hex } from 'viem';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startAlto, type AltoProcess } from '../../../test/support/alto.ts';
import { assertIncluded, chainUnderTest, freshSecret, incrementCall, outcomeRecorder, uniqueId } from '../../../test/support/chainUnderTest.ts';
import { startErc7677Server, type Erc7677Server } from '../../../test/support/erc7677Server.ts';
import { entryPoint07Abi } from '../abi.ts';
import { isChainError } from '../errors.ts';
import { createChainWorker, type LocalChainWorker } from '../worker/index.ts';

// The chain worker sponsored by an ERC-7677 paymaster service (the independent test server, signing for a second
// VerifyingPaymaster with a key the worker never holds) and bundled by the real Alto, on the devnet's base chain.
describe('ERC-7677 sponsor: the chain worker through a paymaster service and Alto (devnet)', () => {
  const base = chainUnderTest('base');
  let alto: AltoProcess;
  let pm: Erc7677Server;
  let worker: LocalChainWorker;
  let outcomes: ReturnType<typeof outcomeRecorder>;

  beforeAll(async () => {
    [alto, pm] = await Promise.all([startAlto('base'), startErc7677Server('base')]);
    const { paymasterSignerKey: _, ...config } = base.config;
    worker = await createChainWorker(
      { ...config, executorKeys: [], bundler: alto.bundlerConfig(), paymaster: pm.paymaster, sponsor: { kind: 'erc7677', url: pm.url, timeoutMs: 5_000 } },
      { serviceSecret: freshSecret() },
    );
    outcomes = outcomeRecorder(worker);
  }, 90_000);
  afterAll(async () => {
    await worker?.close();
    await Promise.all([alto?.stop(), pm?.close()]);
  });

  it('a new wallet\'s first operation: stub, then final data from the service; included by Alto, paid by the second paymaster', async () => {
    const before = { ...pm.calls };
    const op = await worker.prepareOperation({ apiClient: 'acme', agentId: uniqueId('pm-first') }, [incrementCall(base.counter)], { requestId: 'r1' });
    expect(op.factory).toBeDefined();
    expect(op.paymaster).toBe(pm.paymaster);
    expect(op.paymasterVerificationGasLimit).toBe('60000');
    // One stub and one final request per prepared operation: the bundler priced a draft with the stub data.
    expect((pm.calls.pm_getPaymasterStubData ?? 0) - (before.pm_getPaymasterStubData ?? 0)).toBe(1);
    expect((pm.calls.pm_getPaymasterData ?? 0) - (before.pm_getPaymasterData ?? 0)).toBe(1);

    await worker.submitOperation(op);
    const outcome = await outcomes.wait(op.hash);
    assertIncluded(outcome);
    expect(outcome.success).toBe(true);
    const receipt = await base.client.getTransactionReceipt({ hash: outcome.txHash });
    expect(receipt.from.toLowerCase()).toBe(alto.executor.toLowerCase());
    const [event] = parseEventLogs({ abi: entryPoint07Abi, logs: receipt.logs, eventName: 'UserOperationEvent' }).filter((e) => e.args.userOpHash === op.hash);
    expect(event!.args.paymaster).toBe(pm.paymaster);
    expect(event!.args.success).toBe(true);
  });

  it('a refusal fails the prepare with the service\'s message and holds no nonce: the next prepare takes nonce 0', async () => {
    const ref = { apiClient: 'acme', agentId: uniqueId('pm-refused') };
    pm.refuse('not in this policy');
    const e = await worker.prepareOperation(ref, [incrementCall(base.counter)], { requestId: 'x1' }).catch((x: unknown) => x);
    pm.refuse(undefined);
    expect(isChainError(e, 'simulation_reverted')).toBe(true);
    expect((e as Error).message).toContain('not in this policy');
    const op = await worker.prepareOperation(ref, [incrementCall(base.counter)], { requestId: 'x2' });
    expect(op.nonce).toBe('0');
    await worker.submitOperation(op);
    assertIncluded(await outcomes.wait(op.hash as Hex));
  });

  it('figures: prepare time with the paymaster service against the built-in signer, both priced by Alto (printed, not asserted)', async () => {
    const builtin = await createChainWorker({ ...base.config, executorKeys: [], bundler: alto.bundlerConfig() }, { serviceSecret: freshSecret() });
    try {
      const N = 10;
      const time = async (w: LocalChainWorker, tag: string) => {
        const ms: number[] = [];
        for (let i = 0; i < N; i++) {
          const t = performance.now();
          const op = await w.prepareOperation({ apiClient: 'acme', agentId: uniqueId(`fig-${tag}`) }, [incrementCall(base.counter)], { requestId: `f${i}` });
          ms.push(performance.now() - t);
          expect(op.paymaster).toBe(tag === 'erc7677' ? pm.paymaster : base.config.paymaster);
        }
        ms.sort((a, b) => a - b);
        return { median: ms[N >> 1]!.toFixed(1), max: ms[N - 1]!.toFixed(1) };
      };
      // Warm both (the first prepare reads the implementation's code, the fee snapshot).
      await time(worker, 'erc7677');
      await time(builtin, 'builtin');
      const [service, local] = [await time(worker, 'erc7677'), await time(builtin, 'builtin')];
      console.log(`prepare of a new wallet's first operation, ${N} each, priced by Alto: ERC-7677 service median ${service.median} ms (max ${service.max}), built-in signer median ${local.median} ms (max ${local.max})`);
    } finally {
      await builtin.close();
    }
  });
});
