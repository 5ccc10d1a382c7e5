import { rmSync } from 'node:fs';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { chainUnderTest, freshSecret, incrementCall, uniqueId } from '../../../test/support/chainUnderTest.ts';
import { tempDir } from '../../../test/support/env.ts';
import type { ExecutionRequest } from '../../api/v1alpha1/index.ts';
import { createChainWorker, type LocalChainWorker } from '../../chain/worker/index.ts';
import type { ChainWorker } from '../../chain/types.ts';
import type { ChainName } from '../../config/chains.ts';
import { decisionOf } from '../../gateway/cancel.ts';
import { executionRequest } from '../../gateway/testing/harness.ts';
import { silentLogger } from '../../lib/logger.ts';
import { DEFAULT_PAYMENT_SETTINGS } from '../../payments/settings.ts';
import { createPaymentPolicies } from '../../payments/policies.ts';
import { createHeldAmounts } from '../../payments/uniqueAmounts.ts';
import { openEmbeddedStore, type EmbeddedStore } from '../../store/embedded/index.ts';
import { createExecutionReconciler } from './reconciler.ts';

/**
 * Who wins, a cancel or the signing (phases/cancel.ts), decided by the controller at the exact points where the
 * two meet: a cancel in the cache when the request is taken up ends it unsigned; one stored while it is admitted or
 * being signed comes too late and the signed operation stands. Never both: the request is either cancelled
 * with no operation, or signed with the cancel answered 409. Real chain worker and embedded store.
 */
describe('execution reconciler: a cancel against the signing (devnet, embedded store)', () => {
  const env = chainUnderTest('arbitrum');
  let dir: string;
  let store: EmbeddedStore;
  let worker: LocalChainWorker;

  beforeAll(async () => {
    dir = tempDir('aw-cancel-');
    store = await openEmbeddedStore({ dir: join(dir, 'store'), fsync: false });
    worker = await createChainWorker(env.config, { serviceSecret: freshSecret() });
  });
  afterAll(async () => {
    await worker?.close();
    await store?.close();
    rmSync(dir, { recursive: true, force: true });
  });

  /** The controller's reconciler over `w` (the real worker, or the real worker with a cancel stored mid-call). */
  function reconcilerOver(w: ChainWorker, broadcastingAfterMs?: number) {
    const payments = createPaymentPolicies({ store, namespace: 'default', terms: new Map(), settings: DEFAULT_PAYMENT_SETTINGS, logger: silentLogger });
    return createExecutionReconciler({
      store,
      workers: new Map<ChainName, ChainWorker>([['arbitrum', w]]),
      payments,
      amounts: createHeldAmounts(() => []),
      cached: (ns, name) => cache.get(`${ns}/${name}`),
      earlierUnsigned: () => 0,
      takePushedOutcome: () => undefined,
      ...(broadcastingAfterMs !== undefined && { broadcastingAfterMs }),
    });
  }
  /** The reconciler reads a cache; here the cache is what the store answers just before each reconcile. */
  const cache = new Map<string, ExecutionRequest>();
  async function reconcile(w: ChainWorker, name: string) {
    cache.set(`default/${name}`, await store.get('ExecutionRequest', name));
    return reconcilerOver(w).reconcile('default', name);
  }
  async function newRequest(extra: Partial<ExecutionRequest['spec']> = {}): Promise<ExecutionRequest> {
    const base = executionRequest(uniqueId('req'), 'client-a', { chain: 'arbitrum', agentId: uniqueId('agent') });
    return store.create({ ...base, spec: { ...base.spec, calls: [incrementCall(env.counter)], ...extra } });
  }
  /** What POST /status/:id/cancel stores: the cancel request, under the resourceVersion read. */
  async function storeCancel(name: string): Promise<void> {
    const current = await store.get('ExecutionRequest', name);
    await store.update({ ...current, spec: { ...current.spec, cancelRequestedTime: new Date().toISOString() } });
  }
  /** Reconciles until the request rests (signed, or ended): the requeues a conflict leaves are taken as the queue would. */
  async function settle(w: ChainWorker, name: string): Promise<ExecutionRequest> {
    for (let i = 0; i < 10; i++) {
      const r = await reconcile(w, name);
      const now = await store.get('ExecutionRequest', name);
      if (now.status?.userOperation !== undefined || now.status?.phase === 'Failed') return now;
      if ('done' in r && r.done) return now;
    }
    return store.get('ExecutionRequest', name);
  }

  it('a cancel the controller sees before it signs wins: ended failed (cancelled), nothing signed', async () => {
    const req = await newRequest();
    let prepared = 0;
    await storeCancel(req.metadata.name); // stored, and in the cache when the reconcile reads it
    const w: ChainWorker = Object.assign(Object.create(worker) as ChainWorker, {
      prepareOperation: async (...a: Parameters<ChainWorker['prepareOperation']>) => {
        prepared++;
        return worker.prepareOperation(...a);
      },
    });
    const after = await settle(w, req.metadata.name);
    expect(prepared).toBe(0);
    expect(after.status?.userOperation).toBeUndefined();
    expect(after.status).toMatchObject({ phase: 'Failed', failure: { code: 'cancelled' } });
    expect(after.status?.history?.map((h) => h.phase)).toEqual(['Failed']);
    expect(decisionOf(after)).toMatchObject({ kind: 'cancelled' });
  });

  it('a cancel stored while admission runs, unseen by the cache, comes too late: its write conflicts and only a cancel changed, so the signing stands', async () => {
    const req = await newRequest();
    let prepared = 0;
    const w: ChainWorker = Object.assign(Object.create(worker) as ChainWorker, {
      simulate: async (...a: Parameters<ChainWorker['simulate']>) => {
        await storeCancel(req.metadata.name);
        return worker.simulate(...a);
      },
      prepareOperation: async (...a: Parameters<ChainWorker['prepareOperation']>) => {
        prepared++;
        return worker.prepareOperation(...a);
      },
    });
    const after = await settle(w, req.metadata.name);
    expect(prepared).toBe(1);
    expect(after.spec.cancelRequestedTime).toBeDefined();
    expect(after.status?.phase).toBe('Queued');
    expect(decisionOf(after)).toMatchObject({ kind: 'not_cancellable', body: { reason: 'signed', status: 'queued' } });
  });

  it('a cancel stored while the operation is signed comes too late: the signed operation stands, and the cancel is not_cancellable', async () => {
    const req = await newRequest();
    const w: ChainWorker = Object.assign(Object.create(worker) as ChainWorker, {
      prepareOperation: async (...a: Parameters<ChainWorker['prepareOperation']>) => {
        const op = await worker.prepareOperation(...a);
        await storeCancel(req.metadata.name); // after sign's read, before its write
        return op;
      },
    });
    const after = await settle(w, req.metadata.name);
    expect(after.spec.cancelRequestedTime).toBeDefined();
    expect(after.status?.phase).toBe('Queued');
    expect(after.status?.userOperation).toBeDefined();
    expect(decisionOf(after)).toMatchObject({ kind: 'not_cancellable', body: { reason: 'signed', status: 'queued' } });
    // And it goes on: the next look hands it on, the cancel notwithstanding, and the one after writes Broadcasting
    // (nothing pushed an outcome here, and this reconciler waits 0 ms for one).
    const goingOn = reconcilerOver(worker, 0);
    for (let i = 0; i < 2; i++) {
      cache.set(`default/${req.metadata.name}`, await store.get('ExecutionRequest', req.metadata.name));
      await goingOn.reconcile('default', req.metadata.name);
    }
    expect((await store.get('ExecutionRequest', req.metadata.name)).status?.phase).toBe('Broadcasting');
  });

  it('a paid request cancelled before signing keeps its payment as a credit, and its webhook event carries the record', async () => {
    const req = await newRequest({ paymentMode: 'manual', callbackUrl: 'https://hooks.example.com/aw' });
    const paid = await store.updateStatus({
      ...req,
      status: {
        phase: 'PaymentVerified',
        observedGeneration: 1,
        history: [
          { phase: 'PaymentRequired', time: new Date().toISOString() },
          { phase: 'PaymentVerified', time: new Date().toISOString() },
        ],
        payment: {
          quote: { amountUsd: 1.25, gasCostUsd: 1.24, feeUsd: 0.01, chainId: env.config.chainId, recipient: `0x${'77'.repeat(20)}`, tokens: [], expiresAt: new Date(Date.now() + 600_000).toISOString() },
          paid: { method: 'proof', token: 'USDC', amountRaw: '1250000', payer: `0x${'88'.repeat(20)}`, txHash: `0x${'99'.repeat(32)}`, receipt: 'tx-test' },
        },
      },
    });
    await storeCancel(paid.metadata.name);
    const after = await settle(worker, req.metadata.name);
    expect(after.status).toMatchObject({ phase: 'Failed', failure: { code: 'cancelled' }, payment: { credit: { amountUsd: 1.25 } } });
    expect(after.status?.failure?.message).toContain('credit');
    expect(after.status?.payment?.paid?.receipt).toBe('tx-test'); // the claim stays: the transfer cannot pay twice
    expect(after.status?.history?.map((h) => h.phase)).toEqual(['PaymentRequired', 'PaymentVerified', 'Failed']);
    const events = after.status?.webhookEvents ?? [];
    expect(events.map((e) => e.event)).toEqual(['execution.failed']);
    const data = JSON.parse(events[0]!.body).data;
    expect(data).toMatchObject({ status: 'failed', failure: { code: 'cancelled' }, credit: { amount_usd: 1.25 } });
    expect(data.history.map((h: { status: string }) => h.status)).toEqual(['pending', 'payment_required', 'payment_verified', 'failed']);
  });
});
