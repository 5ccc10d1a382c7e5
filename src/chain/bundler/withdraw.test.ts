import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { Address, Hex } from 'viem';
import type { SignedUserOperation } from '../../api/v1alpha1/index.ts';
import { chainUnderTest, freshSecret, incrementCall, outcomeRecorder, setNumberCall, uniqueId } from '../../../test/support/chainUnderTest.ts';
import { readEntryPointNonce } from '../entryPointNonce.ts';
import { createChainWorker, type LocalChainWorker } from '../worker/index.ts';

/** withdrawOperation against the built-in bundler (devnet): withdrawn or sent, never both; later nonces; nonce reuse. */
describe('withdrawing signed operations from the built-in bundler (devnet)', () => {
  const env = chainUnderTest('arbitrum');
  let worker: LocalChainWorker;
  let outcomes: ReturnType<typeof outcomeRecorder>;
  const rpc = (method: string, params: unknown[] = []) => env.client.request({ method: method as never, params: params as never });
  const chainNonce = (sender: string) => readEntryPointNonce(env.client, env.config.entryPoint, sender as Address);

  beforeAll(async () => {
    worker = await createChainWorker(env.config, { serviceSecret: freshSecret() });
    outcomes = outcomeRecorder(worker);
  });
  afterAll(async () => {
    await rpc('evm_setAutomine', [true]);
    await worker?.close();
  });

  /** A wallet with code (its first operation included), so later operations are plain ones. */
  async function deployedWallet(prefix: string) {
    const ref = { apiClient: 'acme', agentId: uniqueId(prefix) };
    const first = await worker.prepareOperation(ref, [incrementCall(env.counter)], { requestId: uniqueId('deploy') });
    await worker.submitOperation(first);
    expect((await outcomes.wait(first.hash)).state).toBe('included');
    return ref;
  }

  it('withdraws an operation the bundler holds, with its wallet’s later ones; a carried one answers sent and is included; the nonces are reused in order', async () => {
    const ref = await deployedWallet('wd');
    await rpc('evm_setAutomine', [false]);
    let carried: SignedUserOperation;
    let waiting: SignedUserOperation[];
    try {
      carried = await worker.prepareOperation(ref, [setNumberCall(env.counter, 1n)], { requestId: uniqueId('a') });
      await worker.submitOperation(carried);
      // Its bundle transaction waits in the node's mempool (automine off): the sender is busy, later ones wait in ours.
      await expect.poll(async () => Number(((await rpc('txpool_status')) as { pending: string }).pending), { timeout: 10_000, interval: 20 }).toBeGreaterThanOrEqual(1);
      waiting = [];
      for (let i = 0; i < 3; i++) {
        const op = await worker.prepareOperation(ref, [setNumberCall(env.counter, BigInt(10 + i))], { requestId: uniqueId('b') });
        await worker.submitOperation(op);
        waiting.push(op);
      }
      expect(waiting.map((o) => BigInt(o.nonce))).toEqual([1n, 2n, 3n].map((d) => BigInt(carried.nonce) + d));

      expect(await worker.withdrawOperation(carried)).toEqual({ state: 'sent' });
      // Withdrawing the middle one takes the last one too (it could only wait behind the gap), not the first.
      expect(await worker.withdrawOperation(waiting[1]!)).toEqual({ state: 'withdrawn', withdrawn: [waiting[1]!.hash, waiting[2]!.hash] });
      expect(await worker.withdrawOperation(waiting[0]!)).toEqual({ state: 'withdrawn', withdrawn: [waiting[0]!.hash] });
      // Asked again: the same answer; submitted again: a no-op (it stays withdrawn).
      expect(await worker.withdrawOperation(waiting[2]!)).toEqual({ state: 'withdrawn', withdrawn: [waiting[2]!.hash] });
      await worker.submitOperation(waiting[0]!);
      expect(await worker.getOperationOutcome(waiting[0]!)).toMatchObject({ state: 'dropped', code: 'withdrawn' });
    } finally {
      await rpc('evm_setAutomine', [true]);
      await rpc('evm_mine');
    }
    expect(await outcomes.wait(carried.hash)).toMatchObject({ state: 'included', success: true });
    expect(await chainNonce(carried.sender)).toBe(BigInt(carried.nonce) + 1n);

    // The freed nonces go to the wallet's next operations, lowest first, each signed anew (another hash).
    const next = await worker.prepareOperation(ref, [setNumberCall(env.counter, 77n)], { requestId: uniqueId('c') });
    expect(next.nonce).toBe(waiting[0]!.nonce);
    expect(next.hash).not.toBe(waiting[0]!.hash);
    const after = await worker.prepareOperation(ref, [setNumberCall(env.counter, 78n)], { requestId: uniqueId('d') });
    expect(after.nonce).toBe(waiting[1]!.nonce);
    await Promise.all([next, after].map((op) => worker.submitOperation(op)));
    for (const op of [next, after]) expect(await outcomes.wait(op.hash)).toMatchObject({ state: 'included', success: true });
    expect(await chainNonce(carried.sender)).toBe(BigInt(after.nonce) + 1n);
  });

  it('withdraws an operation signed and never submitted, freeing its nonce, again after a restore', async () => {
    const ref = await deployedWallet('wd-unsent');
    const op = await worker.prepareOperation(ref, [incrementCall(env.counter)], { requestId: uniqueId('e') });
    expect(await worker.withdrawOperation(op)).toEqual({ state: 'withdrawn', withdrawn: [op.hash] });
    // The controller restarted before recording the withdrawal: its restore reserves the nonce again, and its
    // withdrawal asked again gives it back again.
    await worker.restoreInFlight([op]);
    expect(await worker.withdrawOperation(op)).toEqual({ state: 'withdrawn', withdrawn: [op.hash] });
    const again = await worker.prepareOperation(ref, [incrementCall(env.counter)], { requestId: uniqueId('f') });
    expect(again.nonce).toBe(op.nonce);
    expect(again.hash).not.toBe(op.hash);
  });

  it('under a race with the bundler loop, every operation is either withdrawn (and its nonce never used) or sent (and included)', async () => {
    const refs = await Promise.all(Array.from({ length: 12 }, (_, i) => deployedWallet(`race${i}`)));
    const answers = await Promise.all(
      refs.map(async (ref, i) => {
        const op = await worker.prepareOperation(ref, [incrementCall(env.counter)], { requestId: uniqueId('g') });
        await worker.submitOperation(op);
        // From the same tick to well past a bundle's wait and simulation: the withdrawal meets the loop at every stage.
        if (i % 6 > 0) await new Promise((r) => setTimeout(r, (i % 6) * 4));
        return { op, answer: await worker.withdrawOperation(op) };
      }),
    );
    let withdrawn = 0;
    for (const { op, answer } of answers) {
      if (answer.state === 'sent') {
        expect(await outcomes.wait(op.hash)).toMatchObject({ state: 'included' });
        expect(await chainNonce(op.sender)).toBe(BigInt(op.nonce) + 1n);
      } else {
        withdrawn++;
        expect(answer.withdrawn).toEqual([op.hash as Hex]);
        expect(await worker.getOperationOutcome(op)).toMatchObject({ state: 'dropped', code: 'withdrawn' });
      }
    }
    // Nothing that was withdrawn ran: after every bundle settled, those wallets' nonces still wait at the operation's.
    await new Promise((r) => setTimeout(r, 500));
    for (const { op, answer } of answers) {
      if (answer.state === 'withdrawn') expect(await chainNonce(op.sender)).toBe(BigInt(op.nonce));
    }
    // At least one withdrawal met an operation not yet sent (the same-tick ones cannot have been sent).
    expect(withdrawn).toBeGreaterThan(0);
  });
});
