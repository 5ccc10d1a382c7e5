import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { parseEventLogs, type Hex } from 'viem';
import type { SignedUserOperation } from '../../api/v1alpha1/index.ts';
import { entryPoint07Abi } from '../abi.ts';
import { assertIncluded, chainUnderTest, counterAbi, freshSecret, incrementCall, outcomeRecorder, setNumberCall, uniqueId, type Included } from '../../../test/support/chainUnderTest.ts';
import { createChainWorker, type LocalChainWorker } from '../worker/index.ts';
import { bundlesSince } from './bundler.ts';
import { deriveOwnerAccount } from '../ownerKey.ts';
import { withBuiltinBundler } from '../../config/chainConfig.ts';

describe('built-in bundler (devnet)', () => {
  const env = chainUnderTest();
  let worker: LocalChainWorker;
  let outcomes: ReturnType<typeof outcomeRecorder>;

  beforeAll(async () => {
    worker = await createChainWorker(env.config, { serviceSecret: freshSecret() });
    outcomes = outcomeRecorder(worker);
  });
  afterAll(() => worker?.close());

  async function includeAll(ops: readonly SignedUserOperation[]): Promise<Included[]> {
    await Promise.all(ops.map((op) => worker.submitOperation(op)));
    const results = await Promise.all(ops.map((op) => outcomes.wait(op.hash)));
    return results.map((o) => {
      assertIncluded(o);
      return o;
    });
  }

  /** UserOperationEvents of the given transactions, in chain order. */
  async function eventsInChainOrder(txHashes: Iterable<Hex>) {
    const receipts = await Promise.all([...new Set(txHashes)].map((hash) => env.client.getTransactionReceipt({ hash })));
    const logs = receipts.flatMap((r) => r.logs).sort((a, b) => Number(a.blockNumber! - b.blockNumber!) || a.logIndex! - b.logIndex!);
    return { receipts, events: parseEventLogs({ abi: entryPoint07Abi, logs, eventName: 'UserOperationEvent' }) };
  }

  it('includes 20 concurrent operations of one wallet, all of them, in nonce order', async () => {
    const ref = { apiClient: 'acme', agentId: uniqueId('burst') };
    const ops = await Promise.all(
      Array.from({ length: 20 }, (_, i) => worker.prepareOperation(ref, [setNumberCall(env.counter, BigInt(1_000 + i))], { requestId: `r${i}` })),
    );
    expect(ops.map((o) => Number(o.nonce)).sort((a, b) => a - b)).toEqual(Array.from({ length: 20 }, (_, i) => i));
    expect(ops.filter((o) => o.factory !== undefined).map((o) => o.nonce)).toEqual(['0']);

    // Submitted in reverse order: the bundler must still run them by nonce.
    const included = await includeAll([...ops].reverse());
    expect(included.every((o) => o.success)).toBe(true);
    const { events } = await eventsInChainOrder(included.map((o) => o.txHash));
    const ours = events.filter((e) => e.args.sender === ops[0]!.sender);
    expect(ours.map((e) => e.args.nonce)).toEqual(Array.from({ length: 20 }, (_, i) => BigInt(i)));
    // Effects follow nonce order too: after the last block, Counter holds the value of the nonce-19 operation.
    const last = included.reduce((a, b) => (BigInt(a.blockNumber) > BigInt(b.blockNumber) ? a : b));
    const n = await env.client.readContract({ address: env.counter, abi: counterAbi, functionName: 'number', blockNumber: BigInt(last.blockNumber) });
    const lastIndex = ops.findIndex((o) => o.nonce === '19');
    expect(n).toBe(BigInt(1_000 + lastIndex));
  });

  it('packs 50 operations of 50 wallets into few bundles, at ≤ 55k gas per operation', async () => {
    const refs = Array.from({ length: 50 }, (_, i) => ({ apiClient: `client-${i % 5}`, agentId: uniqueId(`fleet${i}`) }));
    const prepareAll = () => Promise.all(refs.map((ref, i) => worker.prepareOperation(ref, [incrementCall(env.counter)], { requestId: `r${i}` })));

    // What the bundles held, from the bundler's stats by size: operations that deploy, distinct wallets.
    const held = async (round: () => Promise<Included[]>) => {
      const before = structuredClone(worker.bundlerStats().bySize);
      const out = await round();
      const since = bundlesSince(worker.bundlerStats().bySize, before);
      return { out, ops: since.reduce((a, b) => a + b.size * b.bundles, 0), deployments: since.reduce((a, b) => a + b.deployments, 0), wallets: since.reduce((a, b) => a + b.wallets, 0) };
    };

    // First operations deploy the wallets (and are much heavier).
    const firstRound = await held(async () => includeAll(await prepareAll()));
    expect(firstRound).toMatchObject({ ops: 50, deployments: 50, wallets: 50 });
    const deployments = firstRound.out;
    const first = await eventsInChainOrder(deployments.map((o) => o.txHash));
    const firstGas = first.receipts.reduce((s, r) => s + r.gasUsed, 0n) / 50n;

    const t0 = performance.now();
    const secondRound = await held(async () => includeAll(await prepareAll()));
    const included = secondRound.out;
    const ms = performance.now() - t0;
    expect(secondRound).toMatchObject({ ops: 50, deployments: 0, wallets: 50 });
    expect(included.every((o) => o.success)).toBe(true);
    const { receipts } = await eventsInChainOrder(included.map((o) => o.txHash));
    const gasPerOp = receipts.reduce((s, r) => s + r.gasUsed, 0n) / 50n;
    console.info(
      `50 ops of 50 wallets: ${receipts.length} bundles (${receipts.map((r) => r.logs.length).join('/')} logs), ` +
        `${gasPerOp} gas/op (first ops with deployment: ${firstGas} gas/op), prepare+include ${ms.toFixed(0)} ms`,
    );
    expect(receipts.length).toBeLessThanOrEqual(4);
    expect(gasPerOp).toBeLessThanOrEqual(55_000n);
  });

  it('keeps each sender in nonce order when submissions interleave with bundles in flight', async () => {
    const droppedBefore = worker.bundlerStats().droppedOps;
    // Two wallets, 10 operations each, submitted interleaved while earlier bundles are still in flight.
    const refs = [uniqueId('a'), uniqueId('b')].map((agentId) => ({ apiClient: 'acme', agentId }));
    const ops: SignedUserOperation[] = [];
    for (let i = 0; i < 10; i++) {
      for (const ref of refs) ops.push(await worker.prepareOperation(ref, [incrementCall(env.counter)], { requestId: `${ref.agentId}-${i}` }));
    }
    const included: Included[] = [];
    for (let i = 0; i < ops.length; i += 3) {
      await Promise.all(ops.slice(i, i + 3).map((op) => worker.submitOperation(op)));
      await new Promise((r) => setTimeout(r, 3));
    }
    for (const op of ops) {
      const o = await outcomes.wait(op.hash);
      assertIncluded(o);
      included.push(o);
    }
    const { events } = await eventsInChainOrder(included.map((o) => o.txHash));
    for (const sender of new Set(ops.map((o) => o.sender))) {
      const seq = events.filter((e) => e.args.sender === sender);
      expect(seq.map((e) => e.args.nonce)).toEqual(Array.from({ length: 10 }, (_, i) => BigInt(i)));
    }
    expect(worker.bundlerStats().droppedOps).toBe(droppedBefore);
  });

  it('drops a refused operation from the middle of a bundle, includes the rest, and holds the wallet\'s later ones for the refilled nonce', async () => {
    const w = { apiClient: 'acme', agentId: uniqueId('mid') };
    const others = [uniqueId('o1'), uniqueId('o2')].map((agentId) => ({ apiClient: 'acme', agentId }));
    const n0 = await worker.prepareOperation(w, [incrementCall(env.counter)], { requestId: 'n0' });
    const n1 = await worker.prepareOperation(w, [incrementCall(env.counter)], { requestId: 'n1' });
    const n2 = await worker.prepareOperation(w, [incrementCall(env.counter)], { requestId: 'n2' });
    const rest = await Promise.all(others.map((ref) => worker.prepareOperation(ref, [incrementCall(env.counter)], { requestId: ref.agentId })));
    const forged = { ...n1, signature: await deriveOwnerAccount(freshSecret(), 'mallory').signMessage({ message: { raw: n1.hash as Hex } }) };
    await Promise.all([n0, forged, n2, ...rest].map((op) => worker.submitOperation(op)));

    for (const op of [n0, ...rest]) assertIncluded(await outcomes.wait(op.hash));
    expect(await outcomes.wait(n1.hash)).toMatchObject({ state: 'dropped', code: 'validation_failed' });
    // n2 cannot run before a nonce-1 operation exists: it waits, pending.
    await new Promise((r) => setTimeout(r, 300));
    expect(await worker.getOperationOutcome(n2)).toEqual({ state: 'pending' });
    // The next operation of the wallet refills nonce 1; then n2 runs after it.
    const refill = await worker.prepareOperation(w, [incrementCall(env.counter)], { requestId: 'refill' });
    expect(refill.nonce).toBe('1');
    expect(refill.hash).not.toBe(n1.hash);
    await worker.submitOperation(refill);
    const [a, b] = [await outcomes.wait(refill.hash), await outcomes.wait(n2.hash)];
    assertIncluded(a);
    assertIncluded(b);
    const { events } = await eventsInChainOrder([a.txHash, b.txHash]);
    expect(events.filter((e) => e.args.sender === n0.sender).map((e) => e.args.nonce)).toEqual([1n, 2n]);
  });

  it('also works with send + receipt polling instead of eth_sendRawTransactionSync', async () => {
    const polling = await createChainWorker(withBuiltinBundler(env.config, { syncSend: false, receiptPollMs: 20 }), { serviceSecret: freshSecret() });
    try {
      const rec = outcomeRecorder(polling);
      const refs = [uniqueId('p1'), uniqueId('p2'), uniqueId('p3')].map((agentId) => ({ apiClient: 'acme', agentId }));
      const ops = await Promise.all(refs.map((ref) => polling.prepareOperation(ref, [incrementCall(env.counter)], { requestId: ref.agentId })));
      await Promise.all(ops.map((op) => polling.submitOperation(op)));
      for (const op of ops) {
        const o = await rec.wait(op.hash);
        assertIncluded(o);
        expect(o.success).toBe(true);
      }
    } finally {
      await polling.close();
    }
  });
});
