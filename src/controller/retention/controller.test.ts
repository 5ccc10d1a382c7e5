import { rmSync } from 'node:fs';
import { join } from 'node:path';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { tempDir } from '../../../test/support/env.ts';
import type { ExecutionRequest, ExecutionRequestStatus } from '../../api/v1alpha1/index.ts';
import { openFileArchive, type FileArchive } from '../../archive/files.ts';
import type { ExecutionArchive } from '../../archive/types.ts';
import { executionRequest } from '../../gateway/testing/harness.ts';
import { openEmbeddedStore, type EmbeddedStore } from '../../store/embedded/index.ts';
import { isStoreError } from '../../store/types.ts';
import { Informer } from '../../runtime/index.ts';
import { startRetentionController, type RetentionController } from './controller.ts';

const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms));

async function waitFor(check: () => Promise<boolean>, timeoutMs = 5_000): Promise<void> {
  const deadline = Date.now() + timeoutMs;
  while (!(await check())) {
    if (Date.now() > deadline) throw new Error('condition not met in time');
    await sleep(20);
  }
}

describe('retention controller (embedded store, file archive)', () => {
  let dir: string;
  let store: EmbeddedStore;
  let archive: FileArchive;
  let retention: RetentionController | undefined;

  beforeEach(async () => {
    dir = tempDir('aw-retention-');
    store = await openEmbeddedStore({ dir: join(dir, 'store'), fsync: false });
    archive = await openFileArchive({ dir: join(dir, 'archive'), fsync: false });
  });
  afterEach(async () => {
    await retention?.stop();
    retention = undefined;
    await archive.close();
    await store.close();
    rmSync(dir, { recursive: true, force: true });
  });

  const exists = async (name: string) =>
    store.get('ExecutionRequest', name).then(
      () => true,
      (e: unknown) => (isStoreError(e, 'NotFound') ? false : Promise.reject(e)),
    );

  /** Creates a request and writes its status as the execution controller would. */
  async function request(name: string, status: ExecutionRequestStatus): Promise<ExecutionRequest> {
    const created = await store.create(executionRequest(name, 'client-1'));
    return store.updateStatus({ ...created, status });
  }
  const confirmedAt = (completionTime: Date): ExecutionRequestStatus => ({
    phase: 'Confirmed',
    txHash: `0x${'cd'.repeat(32)}`,
    blockNumber: '7',
    completionTime: completionTime.toISOString(),
  });

  it('archives a finished request once its retention has passed, then deletes it; the archive holds it whole', async () => {
    const completed = new Date();
    const stored = await request('req-done', confirmedAt(completed));
    retention = await startRetentionController({ store, archive, retentionSeconds: 0.4 });
    await sleep(200);
    expect(await exists('req-done')).toBe(true); // not due yet
    await waitFor(async () => !(await exists('req-done')));
    // Deleted once due, never before: a lower bound holds however loaded the machine is.
    expect(Date.now()).toBeGreaterThanOrEqual(completed.getTime() + 400);
    expect(await archive.get('req-done')).toEqual(stored);
    expect(retention.stats()).toEqual({ archived: 1, conflicts: 0 });
    // Requeued for the moment it was due: a handful of reconciles, not a poll loop.
    expect(retention.controller.stats().reconciles).toBeLessThanOrEqual(4);
  });

  it('archives requests already past their retention at startup, and leaves unfinished and recent ones', async () => {
    const longAgo = new Date(Date.now() - 7_200_000);
    const old = await request('req-old', confirmedAt(longAgo));
    const failed = await request('req-failed', {
      phase: 'Failed',
      failure: { code: 'simulation_reverted', message: 'call 0 reverted' },
      completionTime: longAgo.toISOString(),
    });
    await request('req-running', { phase: 'Broadcasting', startTime: longAgo.toISOString() });
    await request('req-recent', confirmedAt(new Date()));
    retention = await startRetentionController({ store, archive, retentionSeconds: 3_600 });
    await waitFor(async () => !(await exists('req-old')) && !(await exists('req-failed')));
    expect(await archive.get('req-old')).toEqual(old);
    expect(await archive.get('req-failed')).toEqual(failed);
    await sleep(200);
    expect(await exists('req-running')).toBe(true);
    expect(await exists('req-recent')).toBe(true);
    expect(await archive.get('req-running')).toBeUndefined();
    expect(await archive.get('req-recent')).toBeUndefined();
  });

  it('a request that finishes while the controller runs is archived after its retention', async () => {
    retention = await startRetentionController({ store, archive, retentionSeconds: 0.2 });
    const running = await request('req-later', { phase: 'Broadcasting' });
    await sleep(400);
    expect(await exists('req-later')).toBe(true);
    const done = await store.updateStatus({ ...running, status: confirmedAt(new Date()) });
    await waitFor(async () => !(await exists('req-later')));
    expect(await archive.get('req-later')).toEqual(done);
  });

  it('a request changed between archive and delete is not deleted blindly: the change is archived too', async () => {
    await request('req-race', confirmedAt(new Date(Date.now() - 60_000)));
    const puts: ExecutionRequest[] = [];
    // The file archive, with a write to the request landing right after its first put (as a webhook
    // controller's status update could): the delete that follows carries a stale resourceVersion.
    const racing: ExecutionArchive = {
      async put(req) {
        await archive.put(req);
        puts.push(req);
        if (puts.length === 1) {
          const current = await store.get('ExecutionRequest', req.metadata.name);
          await store.update({ ...current, metadata: { ...current.metadata, annotations: { 'test/late': 'write' } } });
        }
      },
      get: (name, ns) => archive.get(name, ns),
      putInclusionMark: (mark, ns) => archive.putInclusionMark(mark, ns),
      inclusionMark: (chain, ns) => archive.inclusionMark(chain, ns),
      close: async () => undefined,
    };
    retention = await startRetentionController({ store, archive: racing, retentionSeconds: 1 });
    await waitFor(async () => !(await exists('req-race')));
    expect(puts).toHaveLength(2);
    expect(puts[0]!.metadata.annotations?.['test/late']).toBeUndefined();
    expect((await archive.get('req-race'))?.metadata.annotations).toEqual({ 'test/late': 'write' });
    expect(retention.stats()).toEqual({ archived: 1, conflicts: 1 });
  });

  it('keeps a request whose webhook is still owed, however old, and archives it with its final delivery state', async () => {
    const longAgo = confirmedAt(new Date(Date.now() - 7_200_000));
    const created = await store.create(executionRequest('req-hook', 'client-1', { callbackUrl: 'https://agent.example/hook' }));
    const owed = await store.updateStatus({ ...created, status: longAgo });
    const retrying = await store.create(executionRequest('req-hook-retrying', 'client-1', { callbackUrl: 'https://agent.example/hook' }));
    await store.updateStatus({
      ...retrying,
      status: { ...longAgo, webhook: { id: 'evt_req-hook-retrying', event: 'execution.confirmed', state: 'Retrying', attempts: 3, nextAttemptTime: new Date(Date.now() + 3_600_000).toISOString() } },
    });
    await request('req-no-hook', longAgo);
    retention = await startRetentionController({ store, archive, retentionSeconds: 1 });
    await waitFor(async () => !(await exists('req-no-hook')));
    await sleep(200);
    expect(await exists('req-hook')).toBe(true); // not started: owed
    expect(await exists('req-hook-retrying')).toBe(true); // retrying for hours yet: owed
    expect(await archive.get('req-hook')).toBeUndefined();

    // The delivery ends: the state change brings the request back, and it goes, its delivery state with it.
    const delivered = await store.updateStatus({
      ...owed,
      status: { ...longAgo, webhook: { id: 'evt_req-hook', event: 'execution.confirmed', state: 'Delivered', attempts: 1, lastResponseCode: 200 } },
    });
    await waitFor(async () => !(await exists('req-hook')));
    expect(await archive.get('req-hook')).toEqual(delivered);
    expect(await exists('req-hook-retrying')).toBe(true);
  });

  it('keeps a request until every event it owes is delivered, not only the first', async () => {
    const longAgo = confirmedAt(new Date(Date.now() - 7_200_000));
    const event = (n: number, type: string, state?: 'Delivered') => ({
      id: n === 1 ? 'evt_req-events' : `evt_req-events_${n}`, event: type, time: longAgo.completionTime!, body: '{}', attempts: state ? 1 : 0, ...(state && { state }),
    });
    const created = await store.create(executionRequest('req-events', 'client-1', { callbackUrl: 'https://agent.example/hook' }));
    const owed = await store.updateStatus({
      ...created,
      status: { ...longAgo, webhookEvents: [event(1, 'execution.confirmed', 'Delivered'), event(2, 'execution.inclusion_lost', 'Delivered'), event(3, 'execution.confirmed')] },
    });
    await request('req-events-none', longAgo);
    retention = await startRetentionController({ store, archive, retentionSeconds: 1 });
    await waitFor(async () => !(await exists('req-events-none')));
    await sleep(200);
    expect(await exists('req-events')).toBe(true); // its third event is not delivered yet

    const done = await store.updateStatus({
      ...owed,
      status: { ...owed.status, webhookEvents: [...owed.status!.webhookEvents!.slice(0, 2), event(3, 'execution.confirmed', 'Delivered')] },
    });
    await waitFor(async () => !(await exists('req-events')));
    expect(await archive.get('req-events')).toEqual(done);
  });

  it('shares a given informer and leaves it running on stop', async () => {
    const informer = new Informer({ store, kind: 'ExecutionRequest', namespace: 'default' });
    await request('req-shared', confirmedAt(new Date(Date.now() - 60_000)));
    retention = await startRetentionController({ store, archive, retentionSeconds: 1, informer });
    await waitFor(async () => !(await exists('req-shared')));
    await retention.stop();
    retention = undefined;
    await request('req-after-stop', confirmedAt(new Date(Date.now() - 60_000)));
    await waitFor(async () => informer.get('req-after-stop') !== undefined); // the informer still runs
    await sleep(100);
    expect(await exists('req-after-stop')).toBe(true); // nobody archives after stop
    await informer.stop();
  });
});
