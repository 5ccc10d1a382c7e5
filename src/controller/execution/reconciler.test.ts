import { rmSync } from 'node:fs';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { tempDir } from '../../../test/support/env.ts';
import type { ExecutionRequest, PaymentMode } from '../../api/v1alpha1/index.ts';
import { chainUnderTest, freshSecret, incrementCall, uniqueId } from '../../../test/support/chainUnderTest.ts';
import { createChainWorker, type LocalChainWorker } from '../../chain/worker/index.ts';
import type { ChainName } from '../../config/chains.ts';
import { executionRequest } from '../../gateway/testing/harness.ts';
import type { PaymentPolicies, PaymentPolicy } from '../../payments/types.ts';
import { createHeldAmounts } from '../../payments/uniqueAmounts.ts';
import { openEmbeddedStore, type EmbeddedStore } from '../../store/embedded/index.ts';
import { StoreError } from '../../store/types.ts';
import { createExecutionReconciler, type InternalErrorStep } from './reconciler.ts';

/**
 * What the execution reconciler does with a request it cannot admit: an unexpected error in admission or payment
 * verification fails the request (internal_error, counted) instead of being retried forever; a request that stays
 * unadmitted past the bound fails with admission_timeout; a store that does not answer is retried, not failed.
 */
describe('execution reconciler: every request leaves pending (devnet, embedded store)', () => {
  const env = chainUnderTest('arbitrum');
  let dir: string;
  let store: EmbeddedStore;
  let worker: LocalChainWorker;

  beforeAll(async () => {
    dir = tempDir('aw-reconciler-');
    store = await openEmbeddedStore({ dir: join(dir, 'store'), fsync: false });
    worker = await createChainWorker(env.config, { serviceSecret: freshSecret() });
  });
  afterAll(async () => {
    await worker?.close();
    await store?.close();
    rmSync(dir, { recursive: true, force: true });
  });

  /** A policy whose steps throw what `error` gives: a defect in payment handling. */
  const throwing = (mode: PaymentMode, error: () => unknown): PaymentPolicy => ({
    mode,
    admit: async () => {
      throw error();
    },
    verify: async () => {
      throw error();
    },
    recheck: async () => {
      throw error();
    },
    required: async () => {
      throw error();
    },
  });

  function reconcilerWith(policy: PaymentPolicy, opts: { now?: () => Date; admissionTimeoutMs?: number } = {}) {
    const internal: InternalErrorStep[] = [];
    const payments = { manual: policy, auto: policy, sponsored: policy } as PaymentPolicies;
    const reconciler = createExecutionReconciler({
      store,
      workers: new Map<ChainName, LocalChainWorker>([['arbitrum', worker]]),
      payments,
      amounts: createHeldAmounts(() => []),
      cached: (ns, name) => stored.get(`${ns}/${name}`),
      earlierUnsigned: () => 0,
      takePushedOutcome: () => undefined,
      onInternalError: (step) => internal.push(step),
      ...(opts.now && { now: opts.now }),
      ...(opts.admissionTimeoutMs !== undefined && { admissionTimeoutMs: opts.admissionTimeoutMs }),
    });
    return { reconciler, internal };
  }
  /** The reconciler reads a cache; here the cache is what the store answers, read just before each reconcile. */
  const stored = new Map<string, ExecutionRequest>();
  async function reconcileStored(r: ReturnType<typeof reconcilerWith>['reconciler'], name: string) {
    stored.set(`default/${name}`, await store.get('ExecutionRequest', name));
    return r.reconcile('default', name);
  }
  async function newRequest(mode: PaymentMode): Promise<ExecutionRequest> {
    const base = executionRequest(uniqueId('req'), 'client-a', { chain: 'arbitrum', agentId: uniqueId('agent') });
    return store.create({ ...base, spec: { ...base.spec, paymentMode: mode, calls: [incrementCall(env.counter)] } });
  }

  it('an unexpected error while admitting fails the request with internal_error and counts it', async () => {
    const req = await newRequest('manual');
    const { reconciler, internal } = reconcilerWith(throwing('manual', () => new TypeError("Cannot read properties of undefined (reading 'address')")));
    expect(await reconcileStored(reconciler, req.metadata.name)).toEqual({ done: true });
    const after = await store.get('ExecutionRequest', req.metadata.name);
    expect(after.status?.phase).toBe('Failed');
    expect(after.status?.failure).toMatchObject({ code: 'internal_error' });
    expect(after.status?.failure?.message).toContain('nothing was executed');
    expect(internal).toEqual(['admission']);
  });

  it('an unexpected error while verifying an attached payment fails the request with internal_error', async () => {
    const req = await newRequest('manual');
    const quoted = await store.updateStatus({
      ...req,
      status: {
        phase: 'PaymentRequired',
        observedGeneration: 0, // the spec's generation (1) is ahead: a payment was attached since the last look
        payment: {
          quote: { amountUsd: 1, gasCostUsd: 0.99, feeUsd: 0.01, chainId: 421614, recipient: `0x${'77'.repeat(20)}`, tokens: [], expiresAt: new Date(Date.now() + 600_000).toISOString() },
        },
      },
    });
    expect(quoted.metadata.generation).toBeGreaterThan(0);
    const { reconciler, internal } = reconcilerWith(throwing('manual', () => new Error('a defect')));
    await reconcileStored(reconciler, req.metadata.name);
    const after = await store.get('ExecutionRequest', req.metadata.name);
    expect(after.status?.failure?.code).toBe('internal_error');
    expect(internal).toEqual(['payment']);
  });

  it('a store that does not answer is retried: the error propagates and the request is left as it was', async () => {
    const req = await newRequest('manual');
    const { reconciler, internal } = reconcilerWith(throwing('manual', () => new StoreError('Unavailable', 'the API server did not answer')));
    await expect(reconcileStored(reconciler, req.metadata.name)).rejects.toThrow('did not answer');
    expect((await store.get('ExecutionRequest', req.metadata.name)).status?.phase).toBeUndefined();
    expect(internal).toEqual([]);
  });

  it('a request unadmitted past the bound fails with admission_timeout, and admission is not tried again', async () => {
    const req = await newRequest('manual');
    let admitted = 0;
    const counting: PaymentPolicy = {
      ...throwing('manual', () => new Error('unused')),
      admit: async () => {
        admitted++;
        throw new StoreError('Unavailable', 'still down');
      },
    };
    const created = Date.parse(req.metadata.creationTimestamp!);
    let clock = created + 1_000;
    const { reconciler } = reconcilerWith(counting, { now: () => new Date(clock), admissionTimeoutMs: 120_000 });
    await expect(reconcileStored(reconciler, req.metadata.name)).rejects.toThrow('still down');
    expect(admitted).toBe(1);
    clock = created + 120_000;
    expect(await reconcileStored(reconciler, req.metadata.name)).toEqual({ done: true });
    expect(admitted).toBe(1);
    const after = await store.get('ExecutionRequest', req.metadata.name);
    expect(after.status).toMatchObject({ phase: 'Failed', failure: { code: 'admission_timeout' } });
  });
});
