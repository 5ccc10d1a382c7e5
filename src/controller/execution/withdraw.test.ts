import { rmSync } from 'node:fs';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { tempDir } from '../../../test/support/env.ts';
import { API_VERSION, type AgentPolicy, type ExecutionRequest, type SignedUserOperation } from '../../api/v1alpha1/index.ts';
import { chainUnderTest, freshSecret, incrementCall, outcomeRecorder, uniqueId } from '../../../test/support/chainUnderTest.ts';
import type { ChainWorker } from '../../chain/types.ts';
import { createChainWorker, type LocalChainWorker } from '../../chain/worker/index.ts';
import type { ChainName } from '../../config/chains.ts';
import { executionRequest } from '../../gateway/testing/harness.ts';
import type { PaymentPolicies } from '../../payments/types.ts';
import { createHeldAmounts } from '../../payments/uniqueAmounts.ts';
import { openEmbeddedStore, type EmbeddedStore } from '../../store/embedded/index.ts';
import { createExecutionReconciler } from './reconciler.ts';

/**
 * The kill switch on a signed request (phases/withdraw.ts), with the crashes its order is built for: between the
 * decision and the withdrawal, and between the withdrawal and the failure, with the switch turned off again and the
 * worker restarted meanwhile. A withdrawn operation is never sent; one the chain already ran finishes.
 */
describe('the kill switch on signed requests (devnet, embedded store)', () => {
  const env = chainUnderTest('arbitrum');
  const secret = freshSecret();
  let dir: string;
  let store: EmbeddedStore;
  let worker: LocalChainWorker;

  beforeAll(async () => {
    dir = tempDir('aw-withdraw-');
    store = await openEmbeddedStore({ dir: join(dir, 'store'), fsync: false });
    worker = await createChainWorker(env.config, { serviceSecret: secret });
  });
  afterAll(async () => {
    await worker?.close();
    await store?.close();
    rmSync(dir, { recursive: true, force: true });
  });

  const stop: AgentPolicy = {
    apiVersion: API_VERSION,
    kind: 'AgentPolicy',
    metadata: { name: 'stop-all', namespace: 'default' },
    spec: { apiClient: 'client-w', suspended: true, rules: [{ name: 'all', action: 'accept' }] },
  };
  const stored = new Map<string, ExecutionRequest>();
  function reconcilerWith(w: ChainWorker, policies: AgentPolicy[]) {
    return createExecutionReconciler({
      store,
      workers: new Map<ChainName, ChainWorker>([['arbitrum', w]]),
      payments: {} as PaymentPolicies,
      amounts: createHeldAmounts(() => []),
      cached: (ns, name) => stored.get(`${ns}/${name}`),
      earlierUnsigned: () => 0,
      takePushedOutcome: () => undefined,
      policiesFor: () => policies,
    });
  }
  async function reconcileStored(r: ReturnType<typeof reconcilerWith>, name: string) {
    stored.set(`default/${name}`, await store.get('ExecutionRequest', name));
    return r.reconcile('default', name);
  }
  /** A request whose operation is signed and handed to the bundler (phase Broadcasting), as the reconciler leaves it. */
  async function broadcasting(op: SignedUserOperation, agentId: string, payment?: NonNullable<ExecutionRequest['status']>['payment']): Promise<ExecutionRequest> {
    const base = executionRequest(uniqueId('req'), 'client-w', { chain: 'arbitrum', agentId });
    const mode = payment?.paid?.method === 'auto' ? 'auto' : payment ? 'manual' : 'sponsored';
    const req = await store.create({ ...base, spec: { ...base.spec, paymentMode: mode, calls: [incrementCall(env.counter)] } });
    return store.updateStatus({
      ...req,
      status: { phase: 'Broadcasting', userOperation: op, history: [{ phase: 'Queued', time: new Date().toISOString() }], ...(payment && { payment, costUsd: 0.05 }) },
    });
  }
  /** A signed operation of a fresh wallet that waits in the bundler behind a nonce never submitted. */
  async function waitingOperation(agentId: string): Promise<SignedUserOperation> {
    const ref = { apiClient: 'client-w', agentId };
    await worker.prepareOperation(ref, [incrementCall(env.counter)], { requestId: uniqueId('g') });
    const op = await worker.prepareOperation(ref, [incrementCall(env.counter)], { requestId: uniqueId('o') });
    await worker.submitOperation(op);
    return op;
  }
  const policyAllowed = (r: ExecutionRequest) => r.status?.conditions?.find((c) => c.type === 'PolicyAllowed');

  it('a crash after the worker withdrew, the switch turned off and the worker restarted: the request still fails agent_suspended, its operation never sent', async () => {
    const agentId = uniqueId('crash');
    const ref = { apiClient: 'client-w', agentId };
    // Two operations of a fresh wallet; only the second is submitted: it waits in the bundler behind the gap.
    const gap = await worker.prepareOperation(ref, [incrementCall(env.counter)], { requestId: uniqueId('g') });
    const op = await worker.prepareOperation(ref, [incrementCall(env.counter)], { requestId: uniqueId('o') });
    await worker.submitOperation(op);
    const req = await broadcasting(op, agentId);

    // 1. decided and written, 2. withdrawn, then the process dies before 3.
    const crashing: ChainWorker = {
      ...worker,
      withdrawOperation: async (o) => {
        await worker.withdrawOperation(o);
        throw new Error('killed');
      },
    };
    await expect(reconcileStored(reconcilerWith(crashing, [stop]), req.metadata.name)).rejects.toThrow('killed');
    const mid = await store.get('ExecutionRequest', req.metadata.name);
    expect([mid.status?.phase, policyAllowed(mid)?.reason]).toEqual(['Broadcasting', 'Withdrawing']);

    // Restarted: a new worker (same secret), told the operations in flight, this one among them; the switch is off.
    await worker.close();
    worker = await createChainWorker(env.config, { serviceSecret: secret });
    await worker.restoreInFlight([op]);
    await reconcileStored(reconcilerWith(worker, []), req.metadata.name);
    const end = await store.get('ExecutionRequest', req.metadata.name);
    expect(end.status).toMatchObject({ phase: 'Failed', failure: { code: 'agent_suspended', policy: { name: 'stop-all' } } });
    expect(end.status?.failure?.message).toContain('withdrawn from the bundler');
    expect(policyAllowed(end)?.reason).toBe('AgentSuspended');

    // The restored reservation was given back: the wallet's operations take both nonces again, and run.
    const outcomes = outcomeRecorder(worker);
    const again = await Promise.all(
      [0, 1].map((i) => worker.prepareOperation(ref, [incrementCall(env.counter)], { requestId: uniqueId(`n${i}`) })),
    );
    expect(again.map((o) => o.nonce)).toEqual([gap.nonce, op.nonce]);
    await Promise.all(again.map((o) => worker.submitOperation(o)));
    for (const o of again) expect(await outcomes.wait(o.hash)).toMatchObject({ state: 'included', success: true });
    // The withdrawn one can never run now: another operation used its nonce.
    expect(await worker.getOperationOutcome(op)).toMatchObject({ state: 'dropped' });
    outcomes.unsubscribe();
  });

  it('a crash between the decision and the withdrawal: the next look withdraws and fails it, the switch off meanwhile', async () => {
    const agentId = uniqueId('decided');
    const ref = { apiClient: 'client-w', agentId };
    await worker.prepareOperation(ref, [incrementCall(env.counter)], { requestId: uniqueId('g') });
    const op = await worker.prepareOperation(ref, [incrementCall(env.counter)], { requestId: uniqueId('o') });
    await worker.submitOperation(op);
    const req = await broadcasting(op, agentId);
    const dying: ChainWorker = { ...worker, withdrawOperation: async () => Promise.reject(new Error('killed')) };
    await expect(reconcileStored(reconcilerWith(dying, [stop]), req.metadata.name)).rejects.toThrow('killed');
    expect(await worker.getOperationOutcome(op)).toEqual({ state: 'pending' });
    await reconcileStored(reconcilerWith(worker, []), req.metadata.name);
    expect((await store.get('ExecutionRequest', req.metadata.name)).status).toMatchObject({ phase: 'Failed', failure: { code: 'agent_suspended' } });
    expect(await worker.getOperationOutcome(op)).toMatchObject({ state: 'dropped', code: 'withdrawn' });
  });

  it('withdrawing one takes the wallet’s later operations too: their requests fail agent_suspended, even once the switch is lifted', async () => {
    const agentId = uniqueId('later');
    const ref = { apiClient: 'client-w', agentId };
    await worker.prepareOperation(ref, [incrementCall(env.counter)], { requestId: uniqueId('g') });
    const ops = [];
    for (let i = 0; i < 2; i++) ops.push(await worker.prepareOperation(ref, [incrementCall(env.counter)], { requestId: uniqueId(`o${i}`) }));
    for (const op of ops) await worker.submitOperation(op);
    const [first, later] = await Promise.all(ops.map((op) => broadcasting(op, agentId)));
    await reconcileStored(reconcilerWith(worker, [stop]), first!.metadata.name);
    expect(await worker.getOperationOutcome(ops[1]!)).toMatchObject({ state: 'dropped', code: 'withdrawn' });
    await reconcileStored(reconcilerWith(worker, []), later!.metadata.name);
    const end = await store.get('ExecutionRequest', later!.metadata.name);
    expect(end.status).toMatchObject({ phase: 'Failed', failure: { code: 'agent_suspended' } });
    expect(end.status?.failure?.message).toContain('nothing was executed');
  });

  it('a payment taken stays the caller’s as a credit; an auto fee, riding in the withdrawn operation, is not charged', async () => {
    const payer = `0x${'ab'.repeat(20)}`;
    const quote = { amountUsd: 0.05, gasCostUsd: 0.04, feeUsd: 0.01, chainId: 421614, recipient: `0x${'77'.repeat(20)}`, tokens: [], expiresAt: new Date(Date.now() + 600_000).toISOString() };
    const paid = { token: 'USDC', amountRaw: '50000', payer, verifiedTime: new Date().toISOString() };
    const [proofAgent, autoAgent] = [uniqueId('proof'), uniqueId('auto')];
    const byProof = await broadcasting(await waitingOperation(proofAgent), proofAgent, { quote, paid: { ...paid, method: 'proof', txHash: `0x${'12'.repeat(32)}` } });
    const byAuto = await broadcasting(await waitingOperation(autoAgent), autoAgent, { quote, paid: { ...paid, method: 'auto' } });
    const r = reconcilerWith(worker, [stop]);
    for (const req of [byProof, byAuto]) await reconcileStored(r, req.metadata.name);
    const proofEnd = await store.get('ExecutionRequest', byProof.metadata.name);
    expect(proofEnd.status).toMatchObject({ phase: 'Failed', failure: { code: 'agent_suspended' }, costUsd: 0.05, payment: { credit: { amountUsd: 0.05 } } });
    const autoEnd = await store.get('ExecutionRequest', byAuto.metadata.name);
    expect(autoEnd.status).toMatchObject({ phase: 'Failed', failure: { code: 'agent_suspended' }, costUsd: 0 });
    expect(autoEnd.status?.payment?.credit).toBeUndefined();
  });

  it('an operation the chain already ran is not withdrawn: PolicyAllowed says it was sent, and it is confirmed', async () => {
    const agentId = uniqueId('ran');
    const outcomes = outcomeRecorder(worker);
    const op = await worker.prepareOperation({ apiClient: 'client-w', agentId }, [incrementCall(env.counter)], { requestId: uniqueId('r') });
    await worker.submitOperation(op);
    expect((await outcomes.wait(op.hash)).state).toBe('included');
    outcomes.unsubscribe();
    const req = await broadcasting(op, agentId);
    const r = reconcilerWith(worker, [stop]);
    await reconcileStored(r, req.metadata.name);
    const mid = await store.get('ExecutionRequest', req.metadata.name);
    expect([mid.status?.phase, policyAllowed(mid)?.reason]).toEqual(['Broadcasting', 'SentBeforeSuspension']);
    await reconcileStored(r, req.metadata.name);
    expect((await store.get('ExecutionRequest', req.metadata.name)).status?.phase).toBe('Confirmed');
  });
});
