import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { getAddress, parseEventLogs, type Hex } from 'viem';
import { entryPoint07Abi } from '../chain/abi.ts';
import { Bundler } from '../chain/bundler/bundler.ts';
import { createChainClient } from '../chain/client.ts';
import { silentLogger } from '../chain/logger.ts';
import { chainUnderTest, freshSecret, incrementCall, uniqueId } from '../chain/testSupport.ts';
import type { OperationOutcome } from '../chain/types.ts';
import { verifySubmittedOperation } from '../chain/userOperation.ts';
import { createChainWorker, type LocalChainWorker } from '../chain/worker.ts';
import { createMemoryLockManager } from '../locks/memory.ts';
import { bundleObserver } from './bundler.ts';
import { instrumentLockManager } from './locks.ts';
import { createMetrics } from './registry.ts';
import { parseExposition } from './testing/exposition.ts';

/**
 * The Bundler with the metrics observer, on the devnet. The chain worker does not pass an observer to its own
 * bundler yet (that is the lead's wiring), so the test runs a Bundler of its own from the chain's config and
 * uses a worker only to sign operations (the worker's bundler is given nothing and stays idle).
 */
describe('bundle metrics (devnet)', () => {
  const env = chainUnderTest('arbitrum');
  const metrics = createMetrics({ defaultMetrics: false });
  let signer: LocalChainWorker;
  let bundler: Bundler;

  beforeAll(async () => {
    signer = await createChainWorker(env.config, { serviceSecret: freshSecret() });
    const c = env.config;
    bundler = new Bundler({
      client: createChainClient(c),
      chain: c.name,
      chainId: c.chainId,
      entryPoint: getAddress(c.entryPoint),
      beneficiary: getAddress(c.beneficiary),
      executorKeys: c.executorKeys,
      maxOpsPerBundle: c.bundler.maxOpsPerBundle,
      maxWaitMs: 20, // let the burst share bundles
      maxBusyWaitMs: c.bundler.maxBusyWaitMs,
      syncSend: c.bundler.syncSend,
      receiptPollMs: c.bundler.receiptPollMs,
      locks: instrumentLockManager(createMemoryLockManager(), metrics),
      log: silentLogger,
      observer: bundleObserver(metrics),
    });
  });
  afterAll(async () => {
    await bundler?.close();
    await signer?.close();
  });

  it('counts the bundles it mines with their sizes and gas, matching the receipts', async () => {
    const ops = await Promise.all(
      Array.from({ length: 12 }, (_, i) =>
        signer.prepareOperation({ apiClient: 'acme', agentId: uniqueId(`bundle-metrics-${i}`) }, [incrementCall(env.counter)], { requestId: `r${i}` }),
      ),
    );
    const outcomes = new Map<string, OperationOutcome>();
    const unsubscribe = bundler.onOutcome((hash, o) => outcomes.set(hash.toLowerCase(), o));
    for (const op of ops) bundler.submit(op, verifySubmittedOperation(op, { entryPoint: getAddress(env.config.entryPoint), chainId: env.config.chainId }));
    const deadline = Date.now() + 30_000;
    while (outcomes.size < ops.length && Date.now() < deadline) await new Promise((r) => setTimeout(r, 20));
    unsubscribe();
    expect([...outcomes.values()].every((o) => o.state === 'included' && o.success)).toBe(true);

    const txs = [...new Set([...outcomes.values()].map((o) => (o.state === 'included' ? o.txHash : '')))] as Hex[];
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
    // The bundler sends each bundle under an executor lock: waits were observed, labelled by kind only.
    expect(e.value('agentwallet_lock_wait_seconds_count', { lock: 'executor' })).toBe(txs.length);
    expect(e.series('agentwallet_lock_wait_seconds_count')).toBe(1);
    console.info(`bundle metrics: ${txs.length} bundles for 12 ops, ${Math.round(gas / 12)} gas/op (first ops deploy their wallets)`);
  });
});
