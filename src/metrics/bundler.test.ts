import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { parseEventLogs, type Hex } from 'viem';
import { entryPoint07Abi } from '../chain/abi.ts';
import { chainUnderTest, freshSecret, incrementCall, outcomeRecorder, uniqueId } from '../../test/support/chainUnderTest.ts';
import { createChainWorker, type LocalChainWorker } from '../chain/worker/index.ts';
import { createMemoryLockManager } from '../locks/memory.ts';
import { bundleObserver } from './bundler.ts';
import { instrumentLockManager } from './locks.ts';
import { createMetrics } from './registry.ts';
import { parseExposition } from './testing/exposition.ts';
import { withBuiltinBundler } from '../config/chainConfig.ts';

/** The in-process chain worker with the bundle observer and instrumented locks, on the devnet. */
describe('bundle metrics (devnet)', () => {
  const env = chainUnderTest('arbitrum');
  const metrics = createMetrics({ defaultMetrics: false });
  let worker: LocalChainWorker;

  beforeAll(async () => {
    worker = await createChainWorker(
      withBuiltinBundler(env.config, { maxWaitMs: 20 }), // let the burst share bundles
      { serviceSecret: freshSecret(), locks: instrumentLockManager(createMemoryLockManager(), metrics), bundleObserver: bundleObserver(metrics) },
    );
  });
  afterAll(() => worker?.close());

  it('counts the bundles it mines with their sizes and gas, matching the receipts', async () => {
    const ops = await Promise.all(
      Array.from({ length: 12 }, (_, i) =>
        worker.prepareOperation({ apiClient: 'acme', agentId: uniqueId(`bundle-metrics-${i}`) }, [incrementCall(env.counter)], { requestId: `r${i}` }),
      ),
    );
    const recorder = outcomeRecorder(worker);
    await Promise.all(ops.map((op) => worker.submitOperation(op)));
    const outcomes = await Promise.all(ops.map((op) => recorder.wait(op.hash)));
    recorder.unsubscribe();
    expect(outcomes.every((o) => o.state === 'included' && o.success)).toBe(true);

    const txs = [...new Set(outcomes.map((o) => (o.state === 'included' ? o.txHash : '')))] as Hex[];
    const receipts = await Promise.all(txs.map((hash) => env.client.getTransactionReceipt({ hash })));
    const gas = receipts.reduce((s, r) => s + Number(r.gasUsed), 0);

    const e = parseExposition(await metrics.scrape());
    const chain = { chain: 'arbitrum' };
    expect(e.value('agentwallet_bundles_total', { ...chain, result: 'included' })).toBe(txs.length);
    expect(e.find('agentwallet_bundles_total').map((s) => s.labels.result)).toEqual(['included']);
    expect(e.value('agentwallet_bundle_operations_count', chain)).toBe(txs.length);
    expect(e.value('agentwallet_bundle_operations_sum', chain)).toBe(12);
    expect(e.value('agentwallet_bundle_gas_used_sum', chain)).toBe(gas);
    expect(e.value('agentwallet_bundle_gas_used_count', chain)).toBe(txs.length);
    expect(e.value('agentwallet_bundle_gas_per_operation_count', chain)).toBe(txs.length);
    const opsIn = (r: (typeof receipts)[number]) => parseEventLogs({ abi: entryPoint07Abi, logs: r.logs, eventName: 'UserOperationEvent' }).length;
    const perOpSum = receipts.reduce((s, r) => s + Number(r.gasUsed) / opsIn(r), 0);
    expect(e.value('agentwallet_bundle_gas_per_operation_sum', chain)).toBeCloseTo(perOpSum, 6);
    // Each nonce allocation and each bundle sent ran under a lock: waits observed, labelled by kind only.
    expect(e.value('agentwallet_lock_wait_seconds_count', { lock: 'nonce' })).toBe(12);
    expect(e.value('agentwallet_lock_wait_seconds_count', { lock: 'executor' })).toBe(txs.length);
    expect(e.series('agentwallet_lock_wait_seconds_count')).toBe(2);
    console.info(`bundle metrics: ${txs.length} bundles for 12 ops, ${Math.round(gas / 12)} gas/op (first ops deploy their wallets)`);
  });
});
