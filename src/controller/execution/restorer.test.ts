import { rmSync } from 'node:fs';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { tempDir } from '../../../test/support/env.ts';
import type { ExecutionRequestStatus, SignedUserOperation } from '../../api/v1alpha1/index.ts';
import { isChainError } from '../../chain/errors.ts';
import { chainUnderTest, failCall, freshSecret, incrementCall, uniqueId } from '../../../test/support/chainUnderTest.ts';
import { createChainWorker, type LocalChainWorker } from '../../chain/worker/index.ts';
import { executionRequest } from '../../gateway/testing/harness.ts';
import { openEmbeddedStore, type EmbeddedStore } from '../../store/embedded/index.ts';
import { createInFlightRestorer, withRestore } from './restorer.ts';

describe('restoring chain workers (devnet, embedded store)', () => {
  const env = chainUnderTest('arbitrum');
  const secret = freshSecret();
  let dir: string;
  let store: EmbeddedStore;
  const workers: LocalChainWorker[] = [];
  /** A worker as one in its own process is after a (re)start: it refuses to sign until restored. */
  const restartedWorker = async () => {
    const w = await createChainWorker(env.config, { serviceSecret: secret, requireRestore: true });
    workers.push(w);
    return w;
  };

  beforeAll(async () => {
    dir = tempDir('aw-restorer-');
    store = await openEmbeddedStore({ dir: join(dir, 'store'), fsync: false });
  });
  afterAll(async () => {
    await Promise.all(workers.map((w) => w.close()));
    await store?.close();
    rmSync(dir, { recursive: true, force: true });
  });

  it('withRestore: a not_restored prepare restores the worker and is tried once more; other refusals pass through', async () => {
    const worker = await restartedWorker();
    let restores = 0;
    const restored = withRestore(worker, async () => {
      restores++;
      await worker.restoreInFlight([]);
    });
    const ref = { apiClient: 'acme', agentId: uniqueId('restore') };

    await expect(worker.prepareOperation(ref, [incrementCall(env.counter)], { requestId: 'direct' })).rejects.toSatisfy((e) =>
      isChainError(e, 'not_restored'),
    );
    expect((await restored.prepareOperation(ref, [incrementCall(env.counter)], { requestId: 'wrapped' })).nonce).toBe('0');
    expect(restores).toBe(1);

    await expect(restored.prepareOperation(ref, [failCall(env.counter)], { requestId: 'reverts' })).rejects.toSatisfy((e) =>
      isChainError(e, 'simulation_reverted'),
    );
    expect(restores).toBe(1);

    // Every other method is the worker's own.
    expect(restored.chain).toBe(worker.chain);
    expect(await restored.resolveWallet(ref)).toEqual(await worker.resolveWallet(ref));
    expect((await restored.getHead()).blockNumber).toBeGreaterThan(0n);
    expect('onReconnect' in restored).toBe(false); // an in-process worker never reconnects
  });

  it('withRestore: a restore that fails fails the prepare with its error, and nothing is signed', async () => {
    const worker = await restartedWorker();
    const restored = withRestore(worker, () => Promise.reject(new Error('store unavailable')));
    const ref = { apiClient: 'acme', agentId: uniqueId('unrestorable') };
    await expect(restored.prepareOperation(ref, [incrementCall(env.counter)], { requestId: 'r' })).rejects.toThrow('store unavailable');
    await worker.restoreInFlight([]);
    expect((await worker.prepareOperation(ref, [incrementCall(env.counter)], { requestId: 'r2' })).nonce).toBe('0');
  });

  it('restores from the store only the operations in flight on that chain, so a restarted worker takes the next nonce', async () => {
    const signer = await createChainWorker(env.config, { serviceSecret: secret });
    workers.push(signer);
    const agentId = uniqueId('stored');
    const ref = { apiClient: 'acme', agentId };
    const ops: SignedUserOperation[] = [];
    for (const id of ['n0', 'n1']) ops.push(await signer.prepareOperation(ref, [incrementCall(env.counter)], { requestId: id }));
    expect(ops.map((o) => o.nonce)).toEqual(['0', '1']);

    const write = async (name: string, chain: 'arbitrum' | 'base', status: ExecutionRequestStatus) => {
      const created = await store.create(executionRequest(name, 'acme', { agentId, chain }));
      await store.updateStatus({ ...created, status });
    };
    await write('in-flight-0', 'arbitrum', { phase: 'Queued', userOperation: ops[0]! });
    await write('in-flight-1', 'arbitrum', { phase: 'Broadcasting', userOperation: ops[1]! });
    // A finished request and a request on another chain hold nothing here.
    await write('finished', 'arbitrum', { phase: 'Failed', userOperation: { ...ops[1]!, nonce: '2', hash: `0x${'cd'.repeat(32)}` } });
    await write('other-chain', 'base', { phase: 'Queued', userOperation: { ...ops[1]!, nonce: '2', hash: `0x${'ab'.repeat(32)}` } });

    const restarted = await restartedWorker();
    const restorer = createInFlightRestorer(store, 'default', new Map([['arbitrum', restarted]]));
    await Promise.all([restorer.restore('arbitrum'), restorer.restore('arbitrum')]);
    expect((await restarted.prepareOperation(ref, [incrementCall(env.counter)], { requestId: 'after' })).nonce).toBe('2');
  });
});
