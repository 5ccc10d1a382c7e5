import {
  credentials,
  makeClientConstructor,
  Server,
  ServerCredentials,
  status,
  type handleUnaryCall,
  type ServiceDefinition,
} from '@grpc/grpc-js';
import { service as healthService } from 'grpc-health-check';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { encodeFunctionData, type Hex } from 'viem';
import { generatePrivateKey, privateKeyToAccount } from 'viem/accounts';
import { isTerminalError } from '../../runtime/index.ts';
import { ChainError, isChainError } from '../errors.ts';
import { assertIncluded, chainUnderTest, counterAbi, failCall, freshSecret, incrementCall, outcomeRecorder, uniqueId } from '../../../test/support/chainUnderTest.ts';
import type { ReadCall } from '../types.ts';
import { createChainWorker, type LocalChainWorker } from '../worker/index.ts';
import { MAX_READ_CALLS } from '../worker/reads.ts';
import { fundNative, x402Payment } from '../../../test/support/x402.ts';
import { testStablecoinAbi } from '../../devnet/contracts.ts';
import { devnetChain, devnetWalletClient } from '../../devnet/clients.ts';
import { connectChainWorker, type ConnectChainWorkerOptions, type RemoteChainWorker } from './client.ts';
import { ChainWorkerServiceService, type ChainWorkerServiceServer } from './generated/chainworker/v1/chainworker.ts';
import { CHAIN_WORKER_SERVICE_NAME, serveChainWorker, type ChainWorkerServer } from './server.ts';
import { createChainWorkerService } from './service.ts';

/** Short backoffs: the tests provoke failures on purpose and should not wait out production backoffs. */
const FAST: ConnectChainWorkerOptions = {
  retry: { attempts: 3, initialBackoffMs: 20, maxBackoffMs: 50 },
  watchBackoff: { initialMs: 50, maxMs: 200 },
  channelOptions: { 'grpc.initial_reconnect_backoff_ms': 50, 'grpc.max_reconnect_backoff_ms': 200 },
};

/** A bare grpc-js server with hand-modified handlers: the faults a real network or a busy worker produce. */
async function serveHandlers(implementation: ChainWorkerServiceServer, port = 0) {
  const server = new Server();
  server.addService(ChainWorkerServiceService, implementation);
  const bound = await new Promise<number>((resolve, reject) =>
    server.bindAsync(`127.0.0.1:${port}`, ServerCredentials.createInsecure(), (e, p) => (e ? reject(e) : resolve(p))),
  );
  return { port: bound, close: () => server.forceShutdown() };
}

type Seen = { calls: number };
/** The first call gets UNAVAILABLE without a code of ours (a transport failure), before (or after) running. */
function failFirst<Req, Res>(h: handleUnaryCall<Req, Res>, seen: Seen, when: 'before' | 'after'): handleUnaryCall<Req, Res> {
  return (call, callback) => {
    const first = ++seen.calls === 1;
    const lost = { code: status.UNAVAILABLE, details: 'injected: connection reset' };
    if (first && when === 'before') return callback(lost, null);
    h(call, first ? () => callback(lost, null) : callback);
  };
}
function delayed<Req, Res>(h: handleUnaryCall<Req, Res>, seen: Seen, ms: number): handleUnaryCall<Req, Res> {
  return (call, callback) => {
    seen.calls++;
    setTimeout(() => h(call, callback), ms);
  };
}

/** Rejects instead of hanging the test to its timeout when `p` never settles. */
const within = <T>(p: Promise<T>, ms: number, what: string): Promise<T> =>
  Promise.race([p, new Promise<never>((_, reject) => setTimeout(() => reject(new Error(`${what} not within ${ms} ms`)), ms).unref())]);

interface HealthClient {
  check(req: { service: string }, cb: (e: Error | null, res?: { status: string }) => void): void;
  close(): void;
}
const HealthClientCtor = makeClientConstructor(healthService as unknown as ServiceDefinition, 'grpc.health.v1.Health');
const healthOf = (client: HealthClient, service: string) =>
  new Promise<string>((resolve, reject) => client.check({ service }, (e, res) => (e ? reject(e) : resolve(res!.status))));

describe('chain worker over gRPC (devnet)', () => {
  const env = chainUnderTest();
  const secret = freshSecret();
  let worker: LocalChainWorker;
  let server: ChainWorkerServer;
  let remote: RemoteChainWorker;

  beforeAll(async () => {
    worker = await createChainWorker(env.config, { serviceSecret: secret });
    server = await serveChainWorker(worker, { port: 0 });
    remote = connectChainWorker('arbitrum', `127.0.0.1:${server.port}`, FAST);
  });
  afterAll(async () => {
    await remote?.close();
    await server?.close(1_000);
    await worker?.close();
  });

  it('resolves wallets, balances and the head exactly as the in-process worker does', async () => {
    const ref = { apiClient: 'acme', agentId: uniqueId('agent') };
    expect(await remote.resolveWallet(ref)).toEqual(await worker.resolveWallet(ref));
    const hash = await env.funded.sendTransaction({ to: (await worker.resolveWallet(ref)).address, value: 777n });
    await env.client.waitForTransactionReceipt({ hash });
    const balances = await remote.getBalances(ref);
    expect(balances).toEqual(await worker.getBalances(ref));
    expect(balances.nativeWei).toBe('777');
    const before = await env.client.getBlockNumber({ cacheTime: 0 });
    const head = await remote.getHead();
    expect(typeof head.blockNumber).toBe('bigint');
    expect(head.blockNumber).toBeGreaterThanOrEqual(before);
  });

  it('reads as the in-process worker does: the head, a batch with a revert, a pinned block, receipts, the bound on calls', async () => {
    const head = await remote.getHead();
    const block = await env.client.getBlock({ blockNumber: head.blockNumber });
    expect(head).toEqual({ blockNumber: block.number, blockHash: block.hash, timestamp: block.timestamp });

    const number: ReadCall = { to: env.counter, data: encodeFunctionData({ abi: counterAbi, functionName: 'number' }) };
    const fail: ReadCall = { to: env.counter, data: encodeFunctionData({ abi: counterAbi, functionName: 'fail' }) };
    const pinned = await env.client.getBlockNumber({ cacheTime: 0 });
    const batch = await remote.read([number, fail, number], { block: pinned });
    expect(batch).toEqual(await worker.read([number, fail, number], { block: pinned }));
    expect(batch.blockNumber).toBe(pinned);
    expect(batch.results.map((r) => r.success)).toEqual([true, false, true]);
    expect(batch.results[1]).toMatchObject({ success: false, reason: 'Counter: forced failure' });
    await env.client.waitForTransactionReceipt({
      hash: await env.funded.writeContract({ address: env.counter, abi: counterAbi, functionName: 'increment' }),
    });
    const latest = await remote.read([number]);
    expect(latest.blockNumber).toBeGreaterThan(pinned);
    expect(latest.results[0]).not.toEqual(batch.results[0]); // the counter moved on; the pinned read did not see it

    const tooMany = await remote.read(Array(MAX_READ_CALLS + 1).fill(number)).catch((e: unknown) => e);
    expect(isChainError(tooMany, 'invalid_request')).toBe(true);
    expect((tooMany as ChainError).details).toEqual({ maxCalls: MAX_READ_CALLS, calls: MAX_READ_CALLS + 1 });

    const token = env.config.tokens[0]!.address;
    const hash = await env.funded.writeContract({ address: token, abi: testStablecoinAbi, functionName: 'transfer', args: [env.counter, 5n] });
    await env.client.waitForTransactionReceipt({ hash });
    const receipt = await remote.getTransactionReceipt(hash);
    expect(receipt).toEqual(await worker.getTransactionReceipt(hash));
    expect(receipt).toMatchObject({ status: 'success', to: token, confirmations: 1n });
    expect(receipt!.logs).toHaveLength(1);
    const mined = await env.client.getBlock({ blockHash: receipt!.blockHash });
    expect(receipt!.blockTimestamp).toBe(mined.timestamp);
    expect(await remote.getTransactionReceipt(`0x${'ee'.repeat(32)}`)).toBeUndefined();
    const query = { address: token, topics: [receipt!.logs[0]!.topics[0]!, null, receipt!.logs[0]!.topics[2]!], fromBlock: receipt!.blockNumber, toBlock: receipt!.blockNumber };
    const logs = await remote.getLogs(query);
    expect(logs).toEqual(await worker.getLogs(query));
    expect(logs.logs.map((l) => l.transactionHash)).toContain(hash);
    const fees = await remote.getFees();
    expect(fees.maxFeePerGas).toBe(fees.baseFeePerGas * 2n + fees.maxPriorityFeePerGas);
    expect(fees.maxFeePerGas).toBeGreaterThan(0n);
  });

  it('names its senders: the executors of its bundles and its sending accounts (the devnet’s faucet)', async () => {
    const executors = env.config.executorKeys.map((k) => privateKeyToAccount(k).address);
    const faucet = privateKeyToAccount(env.config.sendingAccounts.faucetKey!).address;
    expect(await remote.senders()).toEqual([...executors, faucet]);
    expect(await worker.senders()).toEqual([...executors, faucet]);
  });

  it('simulates: figures as bigints, and a revert with its reason, failing call and data', async () => {
    const ref = { apiClient: 'acme', agentId: uniqueId('sim') };
    const r = await remote.simulate(ref, [incrementCall(env.counter)]);
    if (!r.ok) throw new Error(JSON.stringify(r.error));
    const local = await worker.simulate(ref, [incrementCall(env.counter)]);
    if (!local.ok) throw new Error(JSON.stringify(local.error));
    expect(r.value.wallet).toEqual(local.value.wallet);
    expect(r.value.callGas).toBe(local.value.callGas);
    expect(r.value.estimatedCostWei).toBe(r.value.estimatedGas * r.value.maxFeePerGas);

    // Observed reads travel too: the same answers as in process.
    const observe = [
      { to: env.counter, data: encodeFunctionData({ abi: counterAbi, functionName: 'number' }) },
      { to: env.counter, data: encodeFunctionData({ abi: counterAbi, functionName: 'fail' }) },
    ];
    const [remoteObserved, localObserved] = await Promise.all([remote.simulate(ref, [incrementCall(env.counter)], { observe }), worker.simulate(ref, [incrementCall(env.counter)], { observe })]);
    if (!remoteObserved.ok || !localObserved.ok) throw new Error('observed simulation failed');
    expect(remoteObserved.value.observed).toEqual(localObserved.value.observed);
    expect(remoteObserved.value.observed!.after[1]).toMatchObject({ success: false, reason: 'Counter: forced failure' });

    // Outflows travel too, only when asked: an ERC-20 transfer out of the wallet.
    const usdc = env.config.tokens.find((t) => t.symbol === 'USDC')!.address;
    const { address } = await worker.resolveWallet(ref);
    const minted = await env.funded.writeContract({ address: usdc, abi: testStablecoinAbi, functionName: 'mint', args: [address, 10n] });
    await env.client.waitForTransactionReceipt({ hash: minted });
    const sink = '0x000000000000000000000000000000000000dEaD';
    const pay = [{ target: usdc, value: '0', data: encodeFunctionData({ abi: testStablecoinAbi, functionName: 'transfer', args: [sink, 3n] }) }];
    const [remoteOut, localOut] = await Promise.all([remote.simulate(ref, pay, { outflows: true }), worker.simulate(ref, pay, { outflows: true })]);
    if (!remoteOut.ok || !localOut.ok) throw new Error('simulation with outflows failed');
    expect(remoteOut.value.outflows).toEqual([{ kind: 'erc20', token: usdc, to: sink, amount: 3n, callIndex: 0 }]);
    expect(remoteOut.value.outflows).toEqual(localOut.value.outflows);
    expect('outflows' in r.value).toBe(false);

    const reverted = await remote.simulate(ref, [incrementCall(env.counter), failCall(env.counter)]);
    expect(reverted.ok).toBe(false);
    if (reverted.ok) return;
    expect(reverted.error).toMatchObject({ code: 'simulation_reverted', revertReason: 'Counter: forced failure', callIndex: 1 });
    expect(reverted.error.revertData?.startsWith('0x08c379a0')).toBe(true);
  });

  it('prepares, submits and gets the inclusion pushed through the outcome stream', async () => {
    const outcomes = outcomeRecorder(remote);
    try {
      await remote.watchReady();
      const ref = { apiClient: 'acme', agentId: uniqueId('full') };
      const before = await env.client.readContract({ address: env.counter, abi: counterAbi, functionName: 'number' });
      const op = await remote.prepareOperation(ref, [incrementCall(env.counter)], { requestId: 'grpc-1' });
      expect(op.nonce).toBe('0');
      expect(op.factory).toBe(env.config.simpleAccountFactory);
      await remote.submitOperation(op);
      await remote.submitOperation(op); // idempotent by hash
      const pushed = await outcomes.wait(op.hash);
      assertIncluded(pushed);
      expect(pushed.success).toBe(true);
      expect(await remote.getOperationOutcome(op)).toEqual(pushed);
      expect(await env.client.readContract({ address: env.counter, abi: counterAbi, functionName: 'number' })).toBe(before + 1n);
      expect(await remote.resolveWallet(ref)).toEqual({ address: op.sender, deployed: true });
    } finally {
      outcomes.unsubscribe();
    }
  });

  it('withdraws a signed operation: withdrawn with the hashes taken, asked again the same; an included one answers sent', async () => {
    const ref = { apiClient: 'acme', agentId: uniqueId('withdraw') };
    const first = await remote.prepareOperation(ref, [incrementCall(env.counter)], { requestId: 'grpc-w0' });
    await remote.submitOperation(first);
    await expect.poll(async () => (await remote.getOperationOutcome(first)).state, { timeout: 10_000, interval: 20 }).toBe('included');
    expect(await remote.withdrawOperation(first)).toEqual({ state: 'sent' });
    const op = await remote.prepareOperation(ref, [incrementCall(env.counter)], { requestId: 'grpc-w1' });
    expect(await remote.withdrawOperation(op)).toEqual({ state: 'withdrawn', withdrawn: [op.hash] });
    expect(await remote.withdrawOperation(op)).toEqual({ state: 'withdrawn', withdrawn: [op.hash] });
    expect(await remote.getOperationOutcome(op)).toMatchObject({ state: 'dropped', code: 'withdrawn' });
    expect((await remote.prepareOperation(ref, [incrementCall(env.counter)], { requestId: 'grpc-w2' })).nonce).toBe(op.nonce);
  });

  it('keeps the worker’s error codes: simulation_reverted with details, invalid_operation, not_restored, wrong chain', async () => {
    const ref = { apiClient: 'acme', agentId: uniqueId('err') };
    const refused = await remote.prepareOperation(ref, [failCall(env.counter)], { requestId: 'bad' }).catch((e: unknown) => e);
    expect(isChainError(refused, 'simulation_reverted')).toBe(true);
    expect((refused as ChainError).details).toMatchObject({ requestId: 'bad', revertReason: 'Counter: forced failure' });

    const op = await remote.prepareOperation(ref, [incrementCall(env.counter)], { requestId: 'tampered' });
    const tampered = { ...op, callGasLimit: (BigInt(op.callGasLimit) + 1n).toString() }; // the hash no longer matches
    await expect(remote.submitOperation(tampered)).rejects.toSatisfy((e) => isChainError(e, 'invalid_operation'));
    await expect(remote.submitOperation({ ...op, hash: '0x12' })).rejects.toSatisfy((e) => isChainError(e, 'invalid_operation'));

    // A worker in its own process refuses to sign until told the operations in flight; the controller restores.
    const gated = await createChainWorker(env.config, { serviceSecret: secret, requireRestore: true });
    const gatedServer = await serveChainWorker(gated, { port: 0 });
    const gatedRemote = connectChainWorker('arbitrum', `127.0.0.1:${gatedServer.port}`, FAST);
    try {
      const other = { apiClient: 'acme', agentId: uniqueId('gated') };
      await expect(gatedRemote.prepareOperation(other, [incrementCall(env.counter)], { requestId: 'g' })).rejects.toSatisfy((e) =>
        isChainError(e, 'not_restored'),
      );
      await gatedRemote.restoreInFlight([]);
      expect((await gatedRemote.prepareOperation(other, [incrementCall(env.counter)], { requestId: 'g' })).nonce).toBe('0');
    } finally {
      await gatedRemote.close();
      await gatedServer.close(1_000);
      await gated.close();
    }

    // Pointed at another chain's worker by mistake: refused before anything is signed.
    const misrouted = connectChainWorker('base', `127.0.0.1:${server.port}`, FAST);
    try {
      await expect(misrouted.prepareOperation(ref, [incrementCall(env.counter)], { requestId: 'x' })).rejects.toMatchObject({
        code: 'wrong_chain',
      });
    } finally {
      await misrouted.close();
    }
  });

  it('reports a worker that is gone as rpc_unavailable (retryable for the controller), after retrying idempotent calls', async () => {
    const gone = await serveChainWorker(worker, { port: 0 });
    const client = connectChainWorker('arbitrum', `127.0.0.1:${gone.port}`, FAST);
    try {
      const ref = { apiClient: 'acme', agentId: uniqueId('gone') };
      await client.resolveWallet(ref); // connected
      await gone.close(1_000);
      const e = await client.resolveWallet(ref).catch((x: unknown) => x);
      expect(isChainError(e, 'rpc_unavailable')).toBe(true);
      expect(isTerminalError(e)).toBe(false); // the controller retries it with backoff
      expect(client.stats().retries).toBe(2);
      // As in process, simulate reports it as a failure value, which admission turns into a retry.
      expect(await client.simulate(ref, [incrementCall(env.counter)])).toMatchObject({ ok: false, error: { code: 'rpc_unavailable' } });
      const prepare = await client.prepareOperation(ref, [incrementCall(env.counter)], { requestId: 'r' }).catch((x: unknown) => x);
      expect(isChainError(prepare, 'rpc_unavailable')).toBe(true);
      expect(client.stats().retries).toBe(4); // simulate was retried twice; prepare not at all
    } finally {
      await client.close();
    }
    await expect(client.resolveWallet({ apiClient: 'acme', agentId: 'x' })).rejects.toSatisfy((e) => isChainError(e, 'closed'));
  });

  it('gives up on a call at its deadline: idempotent ones are retried, prepareOperation never', async () => {
    const base = createChainWorkerService(worker).implementation;
    const head: Seen = { calls: 0 };
    const prepare: Seen = { calls: 0 };
    const slow = await serveHandlers({ ...base, getHead: delayed(base.getHead, head, 400), prepareOperation: delayed(base.prepareOperation, prepare, 400) });
    const client = connectChainWorker('arbitrum', `127.0.0.1:${slow.port}`, { ...FAST, deadlinesMs: { getHead: 100, prepareOperation: 100 } });
    try {
      const e = await client.getHead().catch((x: unknown) => x);
      expect(isChainError(e, 'rpc_unavailable')).toBe(true);
      expect((e as ChainError).details).toEqual({ grpcStatus: 'DEADLINE_EXCEEDED' });
      expect(head.calls).toBe(3);

      const p = await client.prepareOperation({ apiClient: 'acme', agentId: uniqueId('slow') }, [incrementCall(env.counter)], { requestId: 's' });
      throw new Error(`expected a deadline, got ${p.hash}`);
    } catch (e) {
      expect(isChainError(e, 'rpc_unavailable')).toBe(true);
      expect((e as ChainError).details).toEqual({ grpcStatus: 'DEADLINE_EXCEEDED' });
      expect(prepare.calls).toBe(1);
    } finally {
      await client.close();
      slow.close();
    }
  });

  it('retries only idempotent calls after a transport failure; a prepare whose answer was lost is repeated by the caller with the same request id', async () => {
    const base = createChainWorkerService(worker).implementation;
    const seen = {
      resolveWallet: { calls: 0 },
      submitOperation: { calls: 0 },
      prepareBefore: { calls: 0 },
      prepareAfter: { calls: 0 },
      read: { calls: 0 },
      getTransactionReceipt: { calls: 0 },
    };
    let prepareMode: 'before' | 'after' = 'before';
    const prepareBefore = failFirst(base.prepareOperation, seen.prepareBefore, 'before');
    const prepareAfter = failFirst(base.prepareOperation, seen.prepareAfter, 'after');
    const flaky = await serveHandlers({
      ...base,
      resolveWallet: failFirst(base.resolveWallet, seen.resolveWallet, 'before'),
      read: failFirst(base.read, seen.read, 'after'),
      getTransactionReceipt: failFirst(base.getTransactionReceipt, seen.getTransactionReceipt, 'before'),
      submitOperation: failFirst(base.submitOperation, seen.submitOperation, 'after'),
      prepareOperation: (call, cb) => (prepareMode === 'before' ? prepareBefore(call, cb) : prepareAfter(call, cb)),
    });
    const client = connectChainWorker('arbitrum', `127.0.0.1:${flaky.port}`, FAST);
    const outcomes = outcomeRecorder(worker);
    try {
      const ref = { apiClient: 'acme', agentId: uniqueId('flaky') };
      expect(await client.resolveWallet(ref)).toEqual(await worker.resolveWallet(ref));
      expect(seen.resolveWallet.calls).toBe(2);
      // Reads are sent again too, whether the first attempt ran or not.
      const number: ReadCall = { to: env.counter, data: encodeFunctionData({ abi: counterAbi, functionName: 'number' }) };
      expect((await client.read([number])).results[0]?.success).toBe(true);
      expect(seen.read.calls).toBe(2);
      expect(await client.getTransactionReceipt(`0x${'ee'.repeat(32)}`)).toBeUndefined();
      expect(seen.getTransactionReceipt.calls).toBe(2);

      // Refused before it ran: not retried, and nothing was signed.
      const e1 = await client.prepareOperation(ref, [incrementCall(env.counter)], { requestId: 'req-a' }).catch((x: unknown) => x);
      expect(isChainError(e1, 'rpc_unavailable')).toBe(true);
      expect(seen.prepareBefore.calls).toBe(1);

      // Ran on the worker (nonce 0 allocated and signed) but the answer was lost: still not retried here.
      prepareMode = 'after';
      const e2 = await client.prepareOperation(ref, [incrementCall(env.counter)], { requestId: 'req-b' }).catch((x: unknown) => x);
      expect(isChainError(e2, 'rpc_unavailable')).toBe(true);
      expect(seen.prepareAfter.calls).toBe(1);
      // The reconciler's own retry of admission uses the same request id: the worker answers with the very
      // operation it signed, so no second nonce is taken.
      const op = await client.prepareOperation(ref, [incrementCall(env.counter)], { requestId: 'req-b' });
      expect(op.nonce).toBe('0');
      const another = await client.prepareOperation(ref, [incrementCall(env.counter)], { requestId: 'req-c' });
      expect(another.nonce).toBe('1');

      // submitOperation ran, its answer was lost, the client sent it again: accepted once, executed once.
      await client.submitOperation(op);
      expect(seen.submitOperation.calls).toBe(2);
      await client.submitOperation(another);
      for (const o of [op, another]) {
        const outcome = await outcomes.wait(o.hash);
        assertIncluded(outcome);
        expect(outcome.success).toBe(true);
      }
    } finally {
      outcomes.unsubscribe();
      await client.close();
      flaky.close();
    }
  });

  it('reports health: SERVING, NOT_SERVING when told, NOT_SERVING while closing', async () => {
    const s = await serveChainWorker(worker, { port: 0 });
    const health = new HealthClientCtor(`127.0.0.1:${s.port}`, credentials.createInsecure()) as unknown as HealthClient;
    try {
      expect(await healthOf(health, '')).toBe('SERVING');
      expect(await healthOf(health, CHAIN_WORKER_SERVICE_NAME)).toBe('SERVING');
      s.setServing(false);
      expect(await healthOf(health, '')).toBe('NOT_SERVING');
      expect(await healthOf(health, CHAIN_WORKER_SERVICE_NAME)).toBe('NOT_SERVING');
      s.setServing(true);
      expect(await healthOf(health, CHAIN_WORKER_SERVICE_NAME)).toBe('SERVING');
      await expect(healthOf(health, 'some.other.Service')).rejects.toMatchObject({ code: status.NOT_FOUND });
      // The generated service path and the health name agree.
      expect(ChainWorkerServiceService.getHead.path.split('/')[1]).toBe(CHAIN_WORKER_SERVICE_NAME);
    } finally {
      health.close();
      await s.close(1_000);
    }
  });

  it('re-opens the outcome stream after the worker’s server restarts on the same port, and pushes again', async () => {
    const first = await serveChainWorker(worker, { port: 0 });
    const port = first.port;
    const client = connectChainWorker('arbitrum', `127.0.0.1:${port}`, FAST);
    const outcomes = outcomeRecorder(client);
    let second: ChainWorkerServer | undefined;
    try {
      await within(client.watchReady(), 5_000, 'outcome stream open');
      expect(client.stats().watchConnects).toBe(1);
      await first.close(1_000); // ends the stream; the client keeps trying
      await new Promise((r) => setTimeout(r, 300)); // a few failed reconnects while nothing listens
      second = await serveChainWorker(worker, { port });
      await within(client.watchReady(), 5_000, 'outcome stream reconnected');
      expect(client.stats().watchConnects).toBe(2);
      const ref = { apiClient: 'acme', agentId: uniqueId('restart') };
      const op = await client.prepareOperation(ref, [incrementCall(env.counter)], { requestId: 'after-restart' });
      await client.submitOperation(op);
      const pushed = await outcomes.wait(op.hash as Hex);
      assertIncluded(pushed);
      expect(pushed.success).toBe(true);
    } finally {
      outcomes.unsubscribe();
      await client.close();
      await second?.close(1_000);
    }
  });

  it('closes gracefully: open streams do not hold shutdown up, calls in progress finish within the grace period, later ones are cut', async () => {
    const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms));
    let delayMs = 300;
    const slowWorker: LocalChainWorker = { ...worker, resolveWallet: async (ref) => (await sleep(delayMs), worker.resolveWallet(ref)) };
    const ref = { apiClient: 'acme', agentId: uniqueId('close') };

    const graceful = await serveChainWorker(slowWorker, { port: 0 });
    const client = connectChainWorker('arbitrum', `127.0.0.1:${graceful.port}`, FAST);
    const outcomes = outcomeRecorder(client);
    try {
      await client.watchReady();
      const inFlight = client.resolveWallet(ref);
      await sleep(50); // the call has reached the worker
      // A grace period longer than the test's timeout: had close() waited for the open outcome stream, the test
      // would time out. It resolves, and the call in progress got its answer.
      await graceful.close(120_000);
      expect(await inFlight).toEqual(await worker.resolveWallet(ref));
    } finally {
      outcomes.unsubscribe();
      await client.close();
    }

    delayMs = 3_000;
    const impatient = await serveChainWorker(slowWorker, { port: 0 });
    const client2 = connectChainWorker('arbitrum', `127.0.0.1:${impatient.port}`, FAST);
    try {
      const inFlight = client2.resolveWallet(ref).catch((e: unknown) => e);
      await sleep(50);
      await impatient.close(200);
      // The call takes 3 s: cut at the 200 ms grace period, not answered.
      expect(isChainError(await inFlight, 'rpc_unavailable')).toBe(true);
    } finally {
      await client2.close();
    }
  });
});

describe('sending accounts over gRPC (devnet)', () => {
  const env = chainUnderTest();
  const generatedKey = generatePrivateKey();
  const settler = privateKeyToAccount(generatedKey);
  const faucetKey = generatePrivateKey();
  const faucet = privateKeyToAccount(faucetKey);
  const aUSD = env.config.tokens.find((t) => t.symbol === 'aUSD')!;
  let worker: LocalChainWorker;
  let server: ChainWorkerServer;
  let remote: RemoteChainWorker;

  beforeAll(async () => {
    await fundNative(env.client, settler.address);
    await fundNative(env.client, faucet.address);
    await devnetWalletClient(devnetChain(env.config), faucetKey).writeContractSync({ address: aUSD.address, abi: testStablecoinAbi, functionName: 'mint', args: [faucet.address, 1_000_000_000n] });
    worker = await createChainWorker(
      { ...env.config, sendingAccounts: { x402SettlerKey: generatedKey, faucetKey }, faucetCap: { tokens: { aUSD: '100' } } },
      { serviceSecret: freshSecret() },
    );
    server = await serveChainWorker(worker, { port: 0 });
    remote = connectChainWorker('arbitrum', `127.0.0.1:${server.port}`, FAST);
  });
  afterAll(async () => {
    await remote?.close();
    await server?.close(1_000);
    await worker?.close();
  });

  it('signs, answers a retried sign with the same transaction, sends it as signed; the settler is one of the senders', async () => {
    expect(await remote.sendingAccount('x402Settlement')).toBe(settler.address);
    expect(await remote.senders()).toContain(settler.address);
    const purpose = await x402Payment(env.config, env.client);
    const signed = await remote.signSend(purpose);
    if (!signed.ok) throw new Error(signed.error.message);
    expect(signed.value).toMatchObject({ account: settler.address, purpose: 'x402Settlement', from: purpose.authorization.from });
    expect(await remote.signSend(purpose)).toEqual(signed);
    expect(await remote.send(signed.value.hash)).toEqual({ ok: true, value: undefined });
    expect((await env.client.waitForTransactionReceipt({ hash: signed.value.hash })).status).toBe('success');
  });

  it('the named reads answer as the in-process worker does: code, ERC-1271, balances, an authorization spent and the transaction that spent it', async () => {
    const purpose = await x402Payment(env.config, env.client);
    const { token, authorization } = purpose;
    const id = { token, authorizer: authorization.from, nonce: authorization.nonce };
    expect(await remote.getCode(token)).toBe(await worker.getCode(token));
    expect(await remote.getCode(token)).not.toBe('0x');
    expect(await remote.getCode(authorization.from)).toBe('0x');
    expect(await remote.isValidSignature(authorization.from, authorization.nonce, purpose.signature)).toBe(false); // an EOA: no code
    expect(await remote.tokenBalance(token, authorization.from)).toBe(10_000_000n);
    expect(await remote.simulateSend(purpose)).toEqual({ ok: true, value: undefined });
    expect(await remote.authorizationState(id)).toBe(false);
    expect(await remote.findAuthorizationUse(id, 100n)).toBeUndefined();
    const signed = await remote.signSend(purpose);
    if (!signed.ok) throw new Error(signed.error.message);
    await remote.send(signed.value.hash);
    const mined = await env.client.waitForTransactionReceipt({ hash: signed.value.hash });
    expect(await remote.authorizationState(id)).toBe(true);
    expect(await remote.findAuthorizationUse(id, 100n)).toBe(signed.value.hash);
    expect(await remote.tokenBalance(token, authorization.from, mined.blockNumber - 1n)).toBe(10_000_000n);
    expect(await remote.tokenBalance(token, authorization.from)).toBe(10_000_000n - BigInt(authorization.value));
    // Only the chain's configured tokens: the code of invalid_request crosses the wire.
    const stranger = privateKeyToAccount(generatePrivateKey()).address;
    await expect(remote.tokenBalance(stranger, authorization.from)).rejects.toSatisfy((e) => isChainError(e, 'invalid_request'));
    await expect(remote.authorizationState({ ...id, token: stranger })).rejects.toSatisfy((e) => isChainError(e, 'invalid_request'));
    await expect(remote.findAuthorizationUse(id, 1_000_000n)).rejects.toSatisfy((e) => isChainError(e, 'invalid_request'));
  });

  it('a faucet transfer over gRPC: signed once per id, sent, the tokens moved; above the cap it is refused', async () => {
    expect(await remote.sendingAccount('faucetTransfer')).toBe(faucet.address);
    expect(await remote.senders()).toContain(faucet.address);
    const to = privateKeyToAccount(generatePrivateKey()).address;
    const drip = { kind: 'faucetTransfer', id: uniqueId('drip'), asset: aUSD.address, to, amount: '100000000' } as const;
    const signed = await remote.signSend(drip);
    if (!signed.ok) throw new Error(signed.error.message);
    expect(signed.value).toMatchObject({ account: faucet.address, purpose: 'faucetTransfer', token: aUSD.address });
    expect(await remote.signSend(drip)).toEqual(signed);
    expect(await remote.send(signed.value.hash)).toEqual({ ok: true, value: undefined });
    expect((await env.client.waitForTransactionReceipt({ hash: signed.value.hash })).status).toBe('success');
    expect(await remote.tokenBalance(aUSD.address, to)).toBe(100_000_000n);
    expect(await remote.signSend({ ...drip, id: uniqueId('drip'), amount: '100000001' })).toMatchObject({ ok: false, error: { code: 'purpose_refused' } });
    expect(await remote.signSend({ ...drip, id: uniqueId('drip'), asset: 'native', amount: '1' })).toMatchObject({ ok: false, error: { code: 'purpose_refused' } });
  });

  it('refusals travel as values with their codes', async () => {
    const purpose = await x402Payment(env.config, env.client, { to: settler.address });
    expect(await remote.signSend(purpose)).toMatchObject({ ok: false, error: { code: 'purpose_refused' } });
    const unknown = `0x${'ab'.repeat(32)}` as Hex;
    expect(await remote.send(unknown)).toMatchObject({ ok: false, error: { code: 'unknown_transaction' } });
    expect(await remote.abandon(unknown)).toMatchObject({ ok: false, error: { code: 'unknown_transaction' } });
    const abandoned = await remote.signSend(await x402Payment(env.config, env.client));
    if (!abandoned.ok) throw new Error(abandoned.error.message);
    expect(await remote.abandon(abandoned.value.hash)).toEqual({ ok: true, value: undefined });
    expect(await remote.send(abandoned.value.hash)).toMatchObject({ ok: false, error: { code: 'expired' } });
  });
});
