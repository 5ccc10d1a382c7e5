import { createServer, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { Hex } from 'viem';
import { startAlto, type AltoProcess } from '../../../../test/support/alto.ts';
import { assertIncluded, chainUnderTest, counterAbi, freshSecret, incrementCall, outcomeRecorder, uniqueId } from '../../../../test/support/chainUnderTest.ts';
import { createChainWorker, type LocalChainWorker } from '../../worker/index.ts';

/**
 * A bundler that lies, in front of the real Alto: a JSON-RPC proxy that rewrites some answers. What the bundler asks
 * is paid from the paymaster's deposit, and what it reports decides a request's outcome: the worker bounds the
 * first and checks the second against the chain.
 */
type Tamper = (method: string, params: unknown[], result: unknown) => unknown;

async function tamperingProxy(target: string, tamper: { current: Tamper }): Promise<{ url: string; server: Server }> {
  const server = createServer((req, res) => {
    let body = '';
    req.on('data', (c: Buffer) => (body += c.toString()));
    req.on('end', async () => {
      const call = JSON.parse(body) as { id: number; method: string; params: unknown[] };
      const answer = (await (await fetch(target, { method: 'POST', headers: { 'content-type': 'application/json' }, body })).json()) as { result?: unknown; error?: unknown };
      const out = 'result' in answer ? { ...answer, result: tamper.current(call.method, call.params, answer.result) } : answer;
      res.writeHead(200, { 'content-type': 'application/json' }).end(JSON.stringify(out));
    });
  });
  await new Promise<void>((r) => server.listen(0, '127.0.0.1', r));
  return { url: `http://127.0.0.1:${(server.address() as AddressInfo).port}`, server };
}

describe('a hostile bundler (a tampering proxy in front of Alto, devnet)', () => {
  const env = chainUnderTest('ethereum');
  const honest: Tamper = (_m, _p, r) => r;
  const tamper = { current: honest };
  let alto: AltoProcess;
  let proxy: { url: string; server: Server };
  let worker: LocalChainWorker;
  let outcomes: ReturnType<typeof outcomeRecorder>;

  beforeAll(async () => {
    alto = await startAlto('ethereum');
    proxy = await tamperingProxy(alto.url, tamper);
    worker = await createChainWorker({ ...env.config, executorKeys: [], bundler: { ...alto.bundlerConfig(), url: proxy.url, recheckAfterMs: 500 } }, { serviceSecret: freshSecret() });
    outcomes = outcomeRecorder(worker);
  }, 90_000);
  afterAll(async () => {
    tamper.current = honest;
    await worker?.close();
    proxy?.server.close();
    await alto?.stop();
  });

  it('asks 100× the preVerificationGas: nothing is signed, the request fails naming the bound, the nonce stays free', async () => {
    const ref = { apiClient: 'acme', agentId: uniqueId('hostile-pvg') };
    tamper.current = (method, _p, r) => (method === 'eth_estimateUserOperationGas' ? { ...(r as object), preVerificationGas: `0x${(BigInt((r as { preVerificationGas: string }).preVerificationGas) * 100n).toString(16)}` } : r);
    await expect(worker.prepareOperation(ref, [incrementCall(env.counter)], { requestId: 'p1' })).rejects.toMatchObject({
      code: 'simulation_reverted',
      message: expect.stringMatching(/more than 5× the service's own estimate.*maxPreVerificationGasRatio/),
    });
    tamper.current = honest;
    const op = await worker.prepareOperation(ref, [incrementCall(env.counter)], { requestId: 'p2' });
    expect(op.nonce).toBe('0'); // the refused one took none
  });

  it('asks 100× the gas price: the operation is signed at no more than 3× the node\'s fees', async () => {
    const node = await worker.getFees();
    tamper.current = (method, _p, r) => {
      if (method !== 'pimlico_getUserOperationGasPrice') return r;
      const big = (x: string) => `0x${(BigInt(x) * 100n).toString(16)}`;
      const t = (r as { standard: { maxFeePerGas: string; maxPriorityFeePerGas: string } }).standard;
      const tier = { maxFeePerGas: big(t.maxFeePerGas), maxPriorityFeePerGas: big(t.maxPriorityFeePerGas) };
      return { slow: tier, standard: tier, fast: tier };
    };
    // Fees are cached for a second: wait for the next read.
    await new Promise((r) => setTimeout(r, 1_100));
    const op = await worker.prepareOperation({ apiClient: 'acme', agentId: uniqueId('hostile-price') }, [incrementCall(env.counter)], { requestId: 'g1' });
    tamper.current = honest;
    expect(BigInt(op.maxFeePerGas)).toBeLessThanOrEqual(node.maxFeePerGas * 3n + node.maxFeePerGas / 10n);
    expect(BigInt(op.maxPriorityFeePerGas)).toBeLessThanOrEqual(node.maxFeePerGas * 3n + node.maxFeePerGas / 10n);
  });

  it('reports an inclusion in a transaction that does not carry the operation: not believed; the chain settles it', async () => {
    // A real transaction of the chain, with no such operation in it.
    const decoy = await env.funded.sendTransactionSync({ to: env.funded.account.address, value: 1n });
    tamper.current = (method, _p, r) => {
      if (method === 'eth_getUserOperationReceipt') {
        return { userOpHash: '0x', success: true, actualGasUsed: '0x1', actualGasCost: '0x1', logs: [], receipt: { transactionHash: decoy.transactionHash, blockHash: decoy.blockHash, blockNumber: `0x${decoy.blockNumber.toString(16)}` } };
      }
      return r;
    };
    const before = await env.client.readContract({ address: env.counter, abi: counterAbi, functionName: 'number' });
    const op = await worker.prepareOperation({ apiClient: 'acme', agentId: uniqueId('hostile-receipt') }, [incrementCall(env.counter)], { requestId: 'r1' });
    await worker.submitOperation(op);
    const outcome = await outcomes.wait(op.hash);
    tamper.current = honest;
    assertIncluded(outcome);
    expect(outcome.txHash).not.toBe(decoy.transactionHash as Hex); // the operation's own bundle, found on the chain
    expect(outcome.success).toBe(true);
    expect(await env.client.readContract({ address: env.counter, abi: counterAbi, functionName: 'number' })).toBeGreaterThan(before);
  });
});
