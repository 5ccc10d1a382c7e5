import { createServer, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { encodeAbiParameters, encodeFunctionData, parseEther, type Address, type Hex } from 'viem';
import { referenceWalletAddresses } from '../devnet/testing/walletAddresses.ts';
import { isChainError } from './errors.ts';
import { LENS_READ_TARGET, lensNativeBalanceAbi } from './types.ts';
import { LockError } from '../locks/types.ts';
import { deriveOwnerAccount, walletSalt } from './ownerKey.ts';
import {
  assertIncluded,
  chainUnderTest,
  counterAbi,
  failCall,
  freshSecret,
  gateAbi,
  incrementCall,
  outcomeRecorder,
  passCall,
  setNumberCall,
  setOpenCall,
  uniqueId,
  call,
} from '../../test/support/chainUnderTest.ts';
import { createChainWorker, type LocalChainWorker } from './worker/index.ts';

describe('chain worker (devnet)', () => {
  const env = chainUnderTest();
  const secret = freshSecret();
  let worker: LocalChainWorker;
  let outcomes: ReturnType<typeof outcomeRecorder>;

  beforeAll(async () => {
    worker = await createChainWorker(env.config, { serviceSecret: secret });
    outcomes = outcomeRecorder(worker);
  });
  afterAll(() => worker?.close());

  const readCounter = async () => ({
    number: await env.client.readContract({ address: env.counter, abi: counterAbi, functionName: 'number' }),
    lastCaller: await env.client.readContract({ address: env.counter, abi: counterAbi, functionName: 'lastCaller' }),
  });
  const setGate = async (open: boolean) => {
    const hash = await env.funded.writeContract({ address: env.gate, abi: gateAbi, functionName: 'setOpen', args: [open] });
    await env.client.waitForTransactionReceipt({ hash });
  };

  describe('resolveWallet', () => {
    it('gives the factory address of (derived owner, agent salt), equal to permissionless toSimpleSmartAccount', async () => {
      const agentId = uniqueId('agent');
      const wallet = await worker.resolveWallet({ apiClient: 'acme', agentId });
      const owner = deriveOwnerAccount(secret, 'acme');
      const { fromFactory, fromPermissionless } = await referenceWalletAddresses({
        client: env.client,
        factory: env.config.simpleAccountFactory,
        entryPoint: env.config.entryPoint,
        owner,
        salt: walletSalt(agentId),
      });
      expect(wallet).toEqual({ address: fromFactory, deployed: false });
      expect(fromPermissionless).toBe(fromFactory);
    });

    it('gives each agent and each client its own wallet, the same one every time', async () => {
      const agentId = uniqueId('agent');
      const a = await worker.resolveWallet({ apiClient: 'acme', agentId });
      const again = await worker.resolveWallet({ apiClient: 'acme', agentId });
      const otherAgent = await worker.resolveWallet({ apiClient: 'acme', agentId: `${agentId}-2` });
      const otherClient = await worker.resolveWallet({ apiClient: 'globex', agentId });
      expect(again.address).toBe(a.address);
      expect(new Set([a.address, otherAgent.address, otherClient.address]).size).toBe(3);
    });

    it('reports balances of the wallet in native coin and every configured token', async () => {
      const ref = { apiClient: 'acme', agentId: uniqueId('rich') };
      const { address } = await worker.resolveWallet(ref);
      const hash = await env.funded.sendTransaction({ to: address, value: 12345n });
      await env.client.waitForTransactionReceipt({ hash });
      const balances = await worker.getBalances(ref);
      expect(balances.address).toBe(address);
      expect(balances.nativeWei).toBe('12345');
      expect(balances.tokens.map((t) => t.symbol).sort()).toEqual(env.config.tokens.map((t) => t.symbol).sort());
      expect(balances.tokens.every((t) => t.raw === '0')).toBe(true);
    });
  });

  describe('simulate', () => {
    it('succeeds for an undeployed wallet, with gas, fee and cost figures', async () => {
      const r = await worker.simulate({ apiClient: 'acme', agentId: uniqueId('sim') }, [incrementCall(env.counter)]);
      if (!r.ok) throw new Error(JSON.stringify(r.error));
      expect(r.value.wallet.deployed).toBe(false);
      // Other test files share the devnet: the counter's slots may already be non-zero (5k, not 20k, per SSTORE).
      expect(r.value.callGas).toBeGreaterThan(5_000n);
      expect(r.value.estimatedGas).toBeGreaterThan(r.value.callGas + 300_000n); // includes the deployment
      expect(r.value.maxFeePerGas).toBeGreaterThan(0n);
      expect(r.value.estimatedCostWei).toBe(r.value.estimatedGas * r.value.maxFeePerGas);
      expect(r.value.estimatedCostUsd).toBeCloseTo((Number(r.value.estimatedCostWei) / 1e18) * env.config.nativeUsdPrice, 5);
    });

    it('surfaces the revert reason and the failing call', async () => {
      const r = await worker.simulate({ apiClient: 'acme', agentId: uniqueId('sim') }, [incrementCall(env.counter), failCall(env.counter)]);
      expect(r.ok).toBe(false);
      if (r.ok) return;
      expect(r.error).toMatchObject({ code: 'simulation_reverted', revertReason: 'Counter: forced failure', callIndex: 1 });
      expect(r.error.message).toContain('Counter: forced failure');
      expect(r.error.revertData?.startsWith('0x08c379a0')).toBe(true);
    });

    it('lets a batch see its own earlier effects', async () => {
      await setGate(false);
      const ref = { apiClient: 'acme', agentId: uniqueId('batch') };
      const alone = await worker.simulate(ref, [passCall(env.gate)]);
      expect(alone.ok || alone.error.revertReason).toBe('Gate: closed');
      const opened = await worker.simulate(ref, [setOpenCall(env.gate, true), passCall(env.gate)]);
      expect(opened.ok).toBe(true);
      const closedAgain = await worker.simulate(ref, [setOpenCall(env.gate, true), setOpenCall(env.gate, false), passCall(env.gate)]);
      expect(closedAgain.ok || closedAgain.error).toMatchObject({ revertReason: 'Gate: closed', callIndex: 2 });
    });

    it('observes reads before and after the calls, on the state the calls leave, without changing the chain', async () => {
      const ref = { apiClient: 'acme', agentId: uniqueId('observe') };
      const { address } = await worker.resolveWallet(ref);
      const number = { to: env.counter, data: encodeFunctionData({ abi: counterAbi, functionName: 'number' }) };
      const lastCaller = { to: env.counter, data: encodeFunctionData({ abi: counterAbi, functionName: 'lastCaller' }) };
      const failing = { to: env.counter, data: encodeFunctionData({ abi: counterAbi, functionName: 'fail' }) };
      const start = (await readCounter()).number;
      const r = await worker.simulate(ref, [setNumberCall(env.counter, start + 5n), incrementCall(env.counter)], { observe: [number, lastCaller, failing] });
      if (!r.ok) throw new Error(JSON.stringify(r.error));
      const word = (x: bigint | Address) => encodeAbiParameters([{ type: typeof x === 'bigint' ? 'uint256' : 'address' }], [x]);
      expect(r.value.observed!.before.slice(0, 1)).toEqual([{ success: true, returnData: word(start) }]);
      expect(r.value.observed!.after.slice(0, 2)).toEqual([
        { success: true, returnData: word(start + 6n) },
        { success: true, returnData: word(address).toLowerCase() },
      ]);
      expect(r.value.observed!.after[2]).toMatchObject({ success: false, reason: 'Counter: forced failure' }); // one failing read fails alone
      expect((await readCounter()).number).toBe(start); // a simulation changes nothing
      const plain = await worker.simulate(ref, [incrementCall(env.counter)]);
      expect(plain.ok && plain.value.observed).toBeUndefined();
    });

    it('observes the native coin through the lens: a read addressed to the zero address measures a balance', async () => {
      const ref = { apiClient: 'acme', agentId: uniqueId('native') };
      const { address } = await worker.resolveWallet(ref);
      await env.client.waitForTransactionReceipt({ hash: await env.funded.sendTransaction({ to: address, value: parseEther('1') }) });
      const native = { to: LENS_READ_TARGET, data: encodeFunctionData({ abi: lensNativeBalanceAbi, functionName: 'nativeBalance', args: [address] }) };
      const sink = '0x000000000000000000000000000000000000dEaD';
      const r = await worker.simulate(ref, [{ target: sink, data: '0x', value: parseEther('0.25').toString() }], { observe: [native] });
      if (!r.ok) throw new Error(JSON.stringify(r.error));
      const word = (x: bigint) => encodeAbiParameters([{ type: 'uint256' }], [x]);
      expect(r.value.observed!.before[0]).toEqual({ success: true, returnData: word(parseEther('1')) });
      expect(r.value.observed!.after[0]).toEqual({ success: true, returnData: word(parseEther('0.75')) });
    });

    it('a call that reverts fails the observed simulation with its reason', async () => {
      const observe = [{ to: env.counter, data: encodeFunctionData({ abi: counterAbi, functionName: 'number' }) }];
      const r = await worker.simulate({ apiClient: 'acme', agentId: uniqueId('observe') }, [failCall(env.counter)], { observe });
      expect(r.ok || r.error).toMatchObject({ code: 'simulation_reverted', revertReason: 'Counter: forced failure' });
    });

    it('reports value beyond the balance as insufficient_funds, and value within it as fine', async () => {
      const ref = { apiClient: 'acme', agentId: uniqueId('poor') };
      const { address } = await worker.resolveWallet(ref);
      const hash = await env.funded.sendTransaction({ to: address, value: parseEther('1') });
      await env.client.waitForTransactionReceipt({ hash });
      const sink: Address = '0x000000000000000000000000000000000000dEaD';
      const tooMuch = await worker.simulate(ref, [call(sink, '0x', parseEther('2'))]);
      expect(tooMuch.ok || tooMuch.error.code).toBe('insufficient_funds');
      const fine = await worker.simulate(ref, [call(sink, '0x', parseEther('0.5'))]);
      expect(fine.ok).toBe(true);
    });

    it('reports an unreachable chain as rpc_unavailable', async () => {
      // A worker behind a forwarding proxy that we then shut down: the chain "goes away" mid-life.
      const upstream = env.config.rpcUrl;
      const proxy: Server = createServer(async (req, res) => {
        const body = await new Promise<string>((r) => {
          let s = '';
          req.on('data', (c) => (s += c));
          req.on('end', () => r(s));
        });
        const answer = await fetch(upstream, { method: 'POST', headers: { 'content-type': 'application/json' }, body });
        res.writeHead(answer.status, { 'content-type': 'application/json' }).end(await answer.text());
      });
      await new Promise<void>((r) => proxy.listen(0, '127.0.0.1', r));
      const port = (proxy.address() as AddressInfo).port;
      const viaProxy = await createChainWorker({ ...env.config, rpcUrl: `http://127.0.0.1:${port}` }, { serviceSecret: secret });
      try {
        proxy.closeAllConnections();
        await new Promise((r) => proxy.close(r));
        const r = await viaProxy.simulate({ apiClient: 'acme', agentId: uniqueId('down') }, [incrementCall(env.counter)]);
        expect(r.ok || r.error.code).toBe('rpc_unavailable');
        await expect(viaProxy.resolveWallet({ apiClient: 'acme', agentId: 'x' })).rejects.toSatisfy((e) => isChainError(e, 'rpc_unavailable'));
      } finally {
        await viaProxy.close();
      }
    });
  });

  describe('prepare → submit → outcome', () => {
    it('executes through the wallet: included, Counter incremented by the wallet, wallet deployed', async () => {
      const ref = { apiClient: 'acme', agentId: uniqueId('full') };
      const before = await readCounter();
      const op = await worker.prepareOperation(ref, [incrementCall(env.counter)], { requestId: 'req-1' });
      expect(op.nonce).toBe('0');
      expect(op.factory).toBe(env.config.simpleAccountFactory);
      await worker.submitOperation(op);
      const outcome = await outcomes.wait(op.hash);
      assertIncluded(outcome);
      expect(outcome.success).toBe(true);
      expect(await worker.getOperationOutcome(op)).toEqual(outcome);
      const after = await readCounter();
      expect(after.number).toBe(before.number + 1n);
      expect(after.lastCaller).toBe(op.sender);
      expect(await worker.resolveWallet(ref)).toEqual({ address: op.sender, deployed: true });

      // The next operation has nonce 1 and no factory.
      const next = await worker.prepareOperation(ref, [incrementCall(env.counter)], { requestId: 'req-2' });
      expect(next.nonce).toBe('1');
      expect(next.factory).toBeUndefined();
      await worker.submitOperation(next);
      const o2 = await outcomes.wait(next.hash);
      assertIncluded(o2);
      expect(o2.success).toBe(true);
    });

    it('never executes an operation twice, however often it is submitted, also after a restart', async () => {
      const ref = { apiClient: 'acme', agentId: uniqueId('twice') };
      const op = await worker.prepareOperation(ref, [incrementCall(env.counter)], { requestId: 'req' });
      await Promise.all([worker.submitOperation(op), worker.submitOperation(op), worker.submitOperation(op)]);
      const outcome = await outcomes.wait(op.hash);
      assertIncluded(outcome);
      const n = (await readCounter()).number;

      await worker.submitOperation(op); // known outcome: a no-op
      expect(await worker.getOperationOutcome(op)).toEqual(outcome);

      // A fresh worker (a restart) knows nothing in memory: it finds the inclusion on chain, and a re-submission
      // is settled as that same inclusion instead of being executed again.
      const restarted = await createChainWorker(env.config, { serviceSecret: secret });
      try {
        const rec = outcomeRecorder(restarted);
        expect(await restarted.getOperationOutcome(op)).toEqual(outcome);
        const other = await createChainWorker(env.config, { serviceSecret: secret });
        const rec2 = outcomeRecorder(other);
        await other.submitOperation(op);
        expect(await rec2.wait(op.hash)).toEqual(outcome);
        await other.close();
        rec.unsubscribe();
      } finally {
        await restarted.close();
      }
      expect((await readCounter()).number).toBe(n);
    });

    it('reports a call that reverts on chain (state changed after signing) as included with success false and the reason', async () => {
      await setGate(true);
      const ref = { apiClient: 'acme', agentId: uniqueId('gate') };
      const sim = await worker.simulate(ref, [passCall(env.gate)]);
      expect(sim.ok).toBe(true);
      const op = await worker.prepareOperation(ref, [passCall(env.gate)], { requestId: 'req' });
      await setGate(false);
      await worker.submitOperation(op);
      const outcome = await outcomes.wait(op.hash);
      assertIncluded(outcome);
      expect(outcome.success).toBe(false);
      expect(outcome.revertReason).toBe('Gate: closed');
      expect(outcome.revertData?.startsWith('0x08c379a0')).toBe(true);
      // The nonce was consumed: the next operation of the wallet goes on normally.
      const next = await worker.prepareOperation(ref, [incrementCall(env.counter)], { requestId: 'req-2' });
      expect(next.nonce).toBe('1');
      await worker.submitOperation(next);
      const o2 = await outcomes.wait(next.hash);
      assertIncluded(o2);
      expect(o2.success).toBe(true);
    });

    it('refuses a submitted operation whose fields do not match its hash, also one it signed itself, and takes the one it signed', async () => {
      const ref = { apiClient: 'acme', agentId: uniqueId('tamper') };
      const op = await worker.prepareOperation(ref, [incrementCall(env.counter)], { requestId: 'tamper' });
      for (const tampered of [
        { ...op, callGasLimit: (BigInt(op.callGasLimit) + 1n).toString() },
        { ...op, maxFeePerGas: (BigInt(op.maxFeePerGas) * 2n).toString() },
        { ...op, factory: undefined, factoryData: undefined },
      ]) {
        await expect(worker.submitOperation(tampered)).rejects.toSatisfy((e) => isChainError(e, 'invalid_operation'));
      }
      await worker.submitOperation(JSON.parse(JSON.stringify(op)) as typeof op); // as it comes back from the store
      assertIncluded(await outcomes.wait(op.hash));
    });

    it('refuses to sign calls that revert now', async () => {
      await expect(
        worker.prepareOperation({ apiClient: 'acme', agentId: uniqueId('bad') }, [failCall(env.counter)], { requestId: 'req' }),
      ).rejects.toSatisfy((e) => isChainError(e, 'simulation_reverted'));
    });

    it('drops an operation the EntryPoint refuses (bad owner signature) with its AA reason, and reuses its nonce', async () => {
      const ref = { apiClient: 'acme', agentId: uniqueId('badsig') };
      const op = await worker.prepareOperation(ref, [incrementCall(env.counter)], { requestId: 'req' });
      // The owner signature is not part of the hash: the same hash with another key's signature.
      const forged = { ...op, signature: await deriveOwnerAccount(secret, 'mallory').signMessage({ message: { raw: op.hash as Hex } }) };
      await worker.submitOperation(forged);
      const outcome = await outcomes.wait(op.hash);
      expect(outcome).toMatchObject({ state: 'dropped', code: 'validation_failed' });
      expect(outcome.state === 'dropped' && outcome.message).toMatch(/^AA24 signature error/);
      const retry = await worker.prepareOperation(ref, [incrementCall(env.counter)], { requestId: 'req-retry' });
      expect(retry.nonce).toBe(op.nonce);
      await worker.submitOperation(retry);
      const o2 = await outcomes.wait(retry.hash);
      assertIncluded(o2);
      expect(o2.success).toBe(true);
    });

    it('drops an operation whose sponsorship expired before inclusion (code expired)', async () => {
      const shortLived = await createChainWorker(
        { ...env.config, bundler: { ...env.config.bundler, sponsorshipTtlSeconds: 1 } },
        { serviceSecret: secret },
      );
      try {
        const rec = outcomeRecorder(shortLived);
        const op = await shortLived.prepareOperation({ apiClient: 'acme', agentId: uniqueId('late') }, [incrementCall(env.counter)], {
          requestId: 'req',
        });
        await new Promise((r) => setTimeout(r, 2_500));
        await shortLived.submitOperation(op);
        expect(await rec.wait(op.hash)).toMatchObject({ state: 'dropped', code: 'expired' });
      } finally {
        await shortLived.close();
      }
    });
  });

  describe('getOperationOutcome and restoreInFlight', () => {
    it('is unknown for a signed operation never sent, and dropped (nonce_used) once another operation used its nonce', async () => {
      const ref = { apiClient: 'acme', agentId: uniqueId('lost') };
      const lost = await worker.prepareOperation(ref, [setNumberCall(env.counter, 7n)], { requestId: 'lost' });
      const other = await createChainWorker(env.config, { serviceSecret: secret });
      try {
        expect(await other.getOperationOutcome(lost)).toEqual({ state: 'unknown' });
        // The other worker does not know `lost` is in flight: it allocates the same nonce 0.
        const rival = await other.prepareOperation(ref, [incrementCall(env.counter)], { requestId: 'rival' });
        expect(rival.nonce).toBe(lost.nonce);
        const rec = outcomeRecorder(other);
        await other.submitOperation(rival);
        // A different operation with the nonce of a pending one is refused.
        await expect(other.submitOperation(lost)).rejects.toSatisfy((e) => isChainError(e, 'nonce_conflict'));
        assertIncluded(await rec.wait(rival.hash));
        expect(await other.getOperationOutcome(lost)).toMatchObject({ state: 'dropped', code: 'nonce_used' });
        await other.submitOperation(lost); // its outcome is known: a no-op
        expect(await other.getOperationOutcome(lost)).toMatchObject({ state: 'dropped', code: 'nonce_used' });
        // Submitted to a bundler that knows nothing of it, it can never run: the bundler settles it the same way.
        const third = await createChainWorker(env.config, { serviceSecret: secret });
        const rec3 = outcomeRecorder(third);
        try {
          await third.submitOperation(lost);
          expect(await rec3.wait(lost.hash)).toMatchObject({ state: 'dropped', code: 'nonce_used' });
        } finally {
          await third.close();
        }
      } finally {
        await other.close();
      }
    });

    it('restoreInFlight keeps a restarted worker from reusing in-flight nonces', async () => {
      const ref = { apiClient: 'acme', agentId: uniqueId('restore') };
      const a = await worker.prepareOperation(ref, [incrementCall(env.counter)], { requestId: 'a' });
      const b = await worker.prepareOperation(ref, [incrementCall(env.counter)], { requestId: 'b' });
      expect([a.nonce, b.nonce]).toEqual(['0', '1']);
      const restarted = await createChainWorker(env.config, { serviceSecret: secret });
      try {
        await restarted.restoreInFlight([a, b]);
        const c = await restarted.prepareOperation(ref, [incrementCall(env.counter)], { requestId: 'c' });
        expect(c.nonce).toBe('2');
        const rec = outcomeRecorder(restarted);
        for (const op of [c, b, a]) await restarted.submitOperation(op); // any order: the bundler restores nonce order
        for (const op of [a, b, c]) {
          const o = await rec.wait(op.hash);
          assertIncluded(o);
          expect(o.success).toBe(true);
        }
      } finally {
        await restarted.close();
      }
    });
    it('answers a repeated prepare of the same request with the same operation (no second nonce)', async () => {
      const ref = { apiClient: 'acme', agentId: uniqueId('again') };
      const first = await worker.prepareOperation(ref, [incrementCall(env.counter)], { requestId: 'again' });
      const repeat = await worker.prepareOperation(ref, [incrementCall(env.counter)], { requestId: 'again' });
      expect(repeat).toEqual(first);
      const other = await worker.prepareOperation(ref, [incrementCall(env.counter)], { requestId: 'again-2' });
      expect(other.nonce).toBe('1');
      await worker.submitOperation(first);
      await worker.submitOperation(other);
      for (const op of [first, other]) assertIncluded(await outcomes.wait(op.hash));
    });

    it('re-signs a request whose calls changed with the same nonce, never a second one', async () => {
      const ref = { apiClient: 'acme', agentId: uniqueId('changed') };
      const first = await worker.prepareOperation(ref, [incrementCall(env.counter)], { requestId: 'changed' });
      const changed = await worker.prepareOperation(ref, [incrementCall(env.counter), incrementCall(env.counter)], { requestId: 'changed' });
      expect(changed.nonce).toBe(first.nonce);
      expect(changed.hash).not.toBe(first.hash);
      const next = await worker.prepareOperation(ref, [incrementCall(env.counter)], { requestId: 'changed-2' });
      expect(next.nonce).toBe('1'); // the first operation's nonce went to its replacement, not to this request
      await worker.submitOperation(changed);
      await worker.submitOperation(next);
      for (const op of [changed, next]) assertIncluded(await outcomes.wait(op.hash));
    });

    it('with requireRestore, refuses to sign (not_restored) until restoreInFlight was called', async () => {
      const fresh = await createChainWorker(env.config, { serviceSecret: secret, requireRestore: true });
      try {
        const ref = { apiClient: 'acme', agentId: uniqueId('gated') };
        const refused = await fresh.prepareOperation(ref, [incrementCall(env.counter)], { requestId: 'g' }).catch((e: unknown) => e);
        expect(isChainError(refused, 'not_restored')).toBe(true);
        await fresh.restoreInFlight([]);
        const op = await fresh.prepareOperation(ref, [incrementCall(env.counter)], { requestId: 'g' });
        expect(op.nonce).toBe('0');
      } finally {
        await fresh.close();
      }
    });
    it('answers rpc_unavailable when its lock service is unreachable (nothing signed, admission retries)', async () => {
      const locks = {
        withLock: async () => {
          throw new LockError('Unavailable', 'lock nonce:x: Redis did not answer');
        },
      };
      const noLocks = await createChainWorker(env.config, { serviceSecret: secret, locks });
      try {
        const e = await noLocks
          .prepareOperation({ apiClient: 'acme', agentId: uniqueId('nolock') }, [incrementCall(env.counter)], { requestId: 'nl' })
          .catch((err: unknown) => err);
        expect(isChainError(e, 'rpc_unavailable')).toBe(true);
        expect((e as Error).message).toMatch(/Redis did not answer/);
      } finally {
        await noLocks.close();
      }
    });
  });
});
