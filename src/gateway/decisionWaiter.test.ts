import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterEach, beforeEach, describe, expect, it, vi } from 'vitest';
import { openEmbeddedStore, type EmbeddedStore } from '../store/embedded/index.ts';
import { createDecisionWaiter } from './decisionWaiter.ts';
import { startExecutionInformer, type ExecutionInformer } from './executionInformer.ts';
import { newRequestId } from '../api/v1alpha1/index.ts';
import { executionRequest, writeStatus } from './testing/harness.ts';

describe('ExecutionRequest informer and decision waiter', () => {
  let dir: string;
  let store: EmbeddedStore;
  let informer: ExecutionInformer;
  beforeEach(async () => {
    dir = mkdtempSync(join(tmpdir(), 'gateway-informer-'));
    store = await openEmbeddedStore({ dir, fsync: false });
  });
  afterEach(async () => {
    await informer.stop();
    await store.close();
    rmSync(dir, { recursive: true, force: true });
  });

  it('one watch serves every waiter; each resolves on its own request’s decision, not before', async () => {
    informer = startExecutionInformer(store, { namespace: 'default' });
    await informer.waitForSync();
    const waiter = createDecisionWaiter(informer);
    const names = Array.from({ length: 10 }, (_, i) => newRequestId(Date.now() + i));
    const created = await Promise.all(names.map((n) => store.create(executionRequest(n, 'client-a'))));
    const decisions = names.map((n, i) => waiter.wait(n, 5_000, created[i]));
    expect(store.stats().watches).toBe(1);

    // Pending and PaymentVerified are not decisions.
    await writeStatus(store, names[0]!, (s) => ({ ...s, phase: 'Pending' }));
    const settled = vi.fn();
    void decisions[0]!.then(settled);
    await new Promise((r) => setTimeout(r, 50));
    expect(settled).not.toHaveBeenCalled();

    await writeStatus(store, names[0]!, (s) => ({ ...s, phase: 'Queued', estimatedGas: 100 }));
    await writeStatus(store, names[1]!, () => ({ phase: 'Failed', failure: { code: 'simulation_reverted', message: 'no' } }));
    await writeStatus(store, names[2]!, () => ({ phase: 'PaymentRequired', payment: {} }));
    await writeStatus(store, names[3]!, () => ({ phase: 'Confirmed' }));
    await store.delete('ExecutionRequest', names[4]!);

    const [d0, d1, d2, d3, d4] = await Promise.all(decisions.slice(0, 5));
    expect(d0).toMatchObject({ kind: 'accepted', request: { status: { phase: 'Queued', estimatedGas: 100 } } });
    expect(d1).toMatchObject({ kind: 'failed', request: { status: { failure: { code: 'simulation_reverted' } } } });
    expect(d2!.kind).toBe('payment_required');
    expect(d3!.kind).toBe('accepted');
    expect(d4!.kind).toBe('deleted');
    for (const n of names.slice(5)) await writeStatus(store, n, () => ({ phase: 'Broadcasting' }));
    for (const d of await Promise.all(decisions.slice(5))) expect(d.kind).toBe('accepted');
  });

  it('answers at once for a request decided before the wait began, and times out otherwise', async () => {
    informer = startExecutionInformer(store, { namespace: 'default' });
    const waiter = createDecisionWaiter(informer);
    await store.create(executionRequest('req-early', 'client-a'));
    const decided = await writeStatus(store, 'req-early', () => ({ phase: 'Queued' }));
    expect((await waiter.wait('req-early', 1_000, decided)).kind).toBe('accepted');
    // Even without the caller's copy: from the informer's cache.
    await vi.waitFor(() => expect(informer.get('req-early')?.status?.phase).toBe('Queued'));
    expect((await waiter.wait('req-early', 1_000)).kind).toBe('accepted');

    const pending = await store.create(executionRequest('req-slow', 'client-a'));
    expect((await waiter.wait('req-slow', 150, pending)).kind).toBe('timeout');
  });

  it('sees objects created before it started, keeps watching across resyncs, and orders recent() newest first', async () => {
    const early = newRequestId(Date.now() - 10_000);
    await store.create(executionRequest(early, 'client-a'));
    informer = startExecutionInformer(store, { namespace: 'default', relistPeriodMs: 30 });
    await informer.waitForSync();
    expect(informer.get(early)).toBeDefined();
    const later = newRequestId();
    await new Promise((r) => setTimeout(r, 100)); // a few relists
    await store.create(executionRequest(later, 'client-a'));
    await vi.waitFor(() => expect(informer.recent(10).map((o) => o.metadata.name)).toEqual([later, early]));
    await new Promise((r) => setTimeout(r, 100));
    await writeStatus(store, early, () => ({ phase: 'Confirmed' }));
    await vi.waitFor(() => expect(informer.get(early)?.status?.phase).toBe('Confirmed'));
    expect(store.stats().watches).toBe(1);
  });
});
