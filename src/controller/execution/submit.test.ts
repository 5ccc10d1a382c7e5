import { rmSync } from 'node:fs';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { chainUnderTest, freshSecret, incrementCall, uniqueId } from '../../../test/support/chainUnderTest.ts';
import { tempDir } from '../../../test/support/env.ts';
import type { ExecutionRequest } from '../../api/v1alpha1/index.ts';
import type { OperationOutcome } from '../../chain/types.ts';
import { createChainWorker, type LocalChainWorker } from '../../chain/worker/index.ts';
import type { ChainName } from '../../config/chains.ts';
import { executionRequest } from '../../gateway/testing/harness.ts';
import { silentLogger } from '../../lib/logger.ts';
import { DEFAULT_PAYMENT_SETTINGS } from '../../payments/settings.ts';
import { createPaymentPolicies } from '../../payments/policies.ts';
import { createHeldAmounts } from '../../payments/uniqueAmounts.ts';
import { openEmbeddedStore, type EmbeddedStore } from '../../store/embedded/index.ts';
import { createExecutionReconciler } from './reconciler.ts';

/**
 * phases/submit.ts: Broadcasting is written only when the outcome takes longer than `broadcastingAfterMs`. An
 * outcome final by the next look goes from Queued to Confirmed in one write whose history still records the
 * Broadcasting it went through; one that is not writes Broadcasting, and tracking goes on as before. Real chain
 * worker (devnet, automine) and embedded store; the writes are counted by the store's own watch.
 */
describe('execution reconciler: the Broadcasting write only when it lasts (devnet, embedded store)', () => {
  const env = chainUnderTest('arbitrum');
  let dir: string;
  let store: EmbeddedStore;
  let worker: LocalChainWorker;
  const pushed = new Map<string, OperationOutcome>();
  const arrived = new Map<string, () => void>();

  beforeAll(async () => {
    dir = tempDir('aw-submit-');
    store = await openEmbeddedStore({ dir: join(dir, 'store'), fsync: false });
    worker = await createChainWorker(env.config, { serviceSecret: freshSecret() });
    worker.onOutcome((hash, outcome) => {
      pushed.set(hash.toLowerCase(), outcome);
      arrived.get(hash.toLowerCase())?.();
    });
  });
  afterAll(async () => {
    await worker?.close();
    await store?.close();
    rmSync(dir, { recursive: true, force: true });
  });

  function reconciler(opts: { push: boolean; broadcastingAfterMs?: number }) {
    const payments = createPaymentPolicies({ store, namespace: 'default', terms: new Map(), settings: DEFAULT_PAYMENT_SETTINGS, logger: silentLogger });
    return createExecutionReconciler({
      store,
      workers: new Map<ChainName, LocalChainWorker>([['arbitrum', worker]]),
      payments,
      amounts: createHeldAmounts(() => []),
      cached: (ns, name) => cache.get(`${ns}/${name}`),
      earlierUnsigned: () => 0,
      takePushedOutcome: (hash) => {
        if (!opts.push) return undefined;
        const o = pushed.get(hash.toLowerCase());
        pushed.delete(hash.toLowerCase());
        return o;
      },
      ...(opts.broadcastingAfterMs !== undefined && { broadcastingAfterMs: opts.broadcastingAfterMs }),
    });
  }
  const cache = new Map<string, ExecutionRequest>();
  let lastSentBefore = 0;
  async function look(r: ReturnType<typeof reconciler>, name: string) {
    cache.set(`default/${name}`, await store.get('ExecutionRequest', name));
    return r.reconcile('default', name);
  }
  async function signedRequest(r: ReturnType<typeof reconciler>) {
    const base = executionRequest(uniqueId('req'), 'client-a', { chain: 'arbitrum', agentId: uniqueId('agent') });
    const req = await store.create({ ...base, spec: { ...base.spec, calls: [incrementCall(env.counter)] } });
    const sentBefore = Date.now();
    expect(await look(r, req.metadata.name)).toEqual({ requeueAfterMs: expect.any(Number) }); // signed, written, handed on
    lastSentBefore = sentBefore;
    const queued = await store.get('ExecutionRequest', req.metadata.name);
    expect(queued.status?.phase).toBe('Queued');
    return queued;
  }
  /** The phases of the request's status writes from now on, as the store's watch delivers them. */
  function writesOf(name: string) {
    const phases: (string | undefined)[] = [];
    const handle = store.watch('ExecutionRequest', {}, (e) => {
      if (e.object.metadata.name === name) phases.push(e.object.status?.phase);
    });
    // Events arrive after the write's promise: stop once the terminal one is in.
    const stop = async () => {
      for (let i = 0; i < 100 && phases.at(-1) !== 'Confirmed'; i++) await new Promise((resolve) => setTimeout(resolve, 10));
      handle.stop();
    };
    return { phases, stop };
  }

  it('an outcome final by the next look: Queued → Confirmed in one write, Broadcasting in its history at the send', async () => {
    const r = reconciler({ push: true });
    const queued = await signedRequest(r);
    const hash = queued.status!.userOperation!.hash.toLowerCase();
    // Signing handed it on right after the Queued write: the outcome is on its way.
    const writes = writesOf(queued.metadata.name);
    const final = pushed.has(hash) ? Promise.resolve() : new Promise<void>((resolve) => arrived.set(hash, resolve));
    await final; // the worker's push (which enqueues the request in the controller)
    await look(r, queued.metadata.name);
    const done = await store.get('ExecutionRequest', queued.metadata.name);
    await writes.stop();
    expect(done.status?.phase).toBe('Confirmed');
    expect(writes.phases).toEqual(['Confirmed']);
    expect(done.status?.history?.map((h) => h.phase)).toEqual(['Queued', 'Broadcasting', 'Confirmed']);
    const broadcastAt = Date.parse(done.status!.history![1]!.time);
    expect(broadcastAt).toBeGreaterThanOrEqual(lastSentBefore);
    expect(broadcastAt).toBeLessThanOrEqual(Date.parse(done.status!.history![2]!.time));
    expect(done.status?.submitAttempts).toBe(1);
    expect(done.status?.conditions?.find((c) => c.type === 'Submitted')).toMatchObject({ status: 'True', reason: 'BundlerAccepted' });
  });

  it('no outcome within broadcastingAfterMs: Broadcasting is written, and tracking reaches Confirmed as before', async () => {
    const r = reconciler({ push: false, broadcastingAfterMs: 50 });
    const queued = await signedRequest(r); // handed on
    const writes = writesOf(queued.metadata.name);
    const early = await look(r, queued.metadata.name); // looked at early (its Queued event): no write yet
    expect('requeueAfterMs' in early && early.requeueAfterMs).toBeGreaterThan(0);
    expect(writes.phases).toEqual([]);
    await new Promise((resolve) => setTimeout(resolve, 60));
    await look(r, queued.metadata.name); // nothing pushed by then: Broadcasting
    expect((await store.get('ExecutionRequest', queued.metadata.name)).status?.phase).toBe('Broadcasting');
    for (let i = 0; i < 50; i++) {
      await look(r, queued.metadata.name); // track: asks the worker
      if ((await store.get('ExecutionRequest', queued.metadata.name)).status?.phase === 'Confirmed') break;
      await new Promise((resolve) => setTimeout(resolve, 20));
    }
    const done = await store.get('ExecutionRequest', queued.metadata.name);
    await writes.stop();
    expect(writes.phases).toEqual(['Broadcasting', 'Confirmed']);
    expect(done.status?.history?.map((h) => h.phase)).toEqual(['Queued', 'Broadcasting', 'Confirmed']);
  });

  it('a restart between the send and the next look (a new reconciler, nothing in memory) sends the same operation again, and it runs once', async () => {
    const before = reconciler({ push: false });
    const queued = await signedRequest(before); // signed and handed on; then "the process dies"
    const after = reconciler({ push: false, broadcastingAfterMs: 0 });
    await look(after, queued.metadata.name); // Queued, nothing in memory: hands the same operation on again
    await look(after, queued.metadata.name); // Broadcasting
    for (let i = 0; i < 50; i++) {
      await look(after, queued.metadata.name);
      if ((await store.get('ExecutionRequest', queued.metadata.name)).status?.phase === 'Confirmed') break;
      await new Promise((resolve) => setTimeout(resolve, 20));
    }
    const done = await store.get('ExecutionRequest', queued.metadata.name);
    expect(done.status?.phase).toBe('Confirmed');
    const op = done.status!.userOperation!;
    expect(await env.client.readContract({ address: env.config.entryPoint, abi: [{ type: 'function', name: 'getNonce', stateMutability: 'view', inputs: [{ type: 'address' }, { type: 'uint192' }], outputs: [{ type: 'uint256' }] }], functionName: 'getNonce', args: [op.sender as `0x${string}`, 0n] })).toBe(BigInt(op.nonce) + 1n);
  });
});
