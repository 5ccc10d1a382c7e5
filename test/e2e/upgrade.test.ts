/**
 * Upgrades with requests in flight (issue 17 §6), embedded layout: the build of UPGRADE_FROM (a real earlier commit,
 * checked out at test time) runs the service on a data directory against the run's devnet and leaves requests
 * there: one finished, one waiting for its payment (402), two broadcasting (one bundle held in the chain's mempool,
 * the same wallet's next operation waiting behind it). It is killed with SIGKILL, and the current code starts on
 * the same data directory and service secret: its store replays the old build's log, and every request finishes
 * as it would have: the held ones confirm exactly once, the 402 is paid and confirms, GET /status answers for all.
 */
import { afterAll, describe, expect, it } from 'vitest';
import { encodeFunctionData, type Hex } from 'viem';
import { callAdminSocket } from '../../src/admin/socket.ts';
import { counterAbi } from '../../src/devnet/contracts.ts';
import { killHard, spawnServiceChild } from '../support/child.ts';
import { newServiceSecret, tempDir, testDevnet } from '../support/env.ts';
import { apiClient, type TestApi } from '../support/http.ts';
import { checkOutBuild, UPGRADE_FROM, type OldBuild } from '../support/oldBuild.ts';
import { newPayer } from '../support/payer.ts';
import { until } from '../support/until.ts';

/** The chain held (automine off) while the old build runs, and the one the 402 is paid on. */
const HELD = 'arbitrum';
const PAID = 'base';

type Child = Awaited<ReturnType<typeof spawnServiceChild>>;

describe(`an upgrade from ${UPGRADE_FROM.slice(0, 7)} with requests in flight (embedded)`, () => {
  const devnet = testDevnet();
  const rpc = (method: string, params: unknown[] = []): Promise<unknown> =>
    devnet.publicClient(HELD).request({ method: method as never, params: params as never });
  let old: OldBuild | undefined;
  const children: Child[] = [];
  afterAll(async () => {
    for (const c of children) await killHard(c.child);
    await rpc('evm_setAutomine', [true]);
    old?.remove();
  });

  it("finishes the old build's requests under the new code: held ones confirm once, a 402 is paid", async () => {
    old = await checkOutBuild(UPGRADE_FROM);
    const dataDir = tempDir('aw-upgrade-');
    const secret = newServiceSecret();
    const counterOf = (chain: typeof HELD | typeof PAID) => devnet.chain(chain).testContracts.counter;
    const readCounter = (chain: typeof HELD | typeof PAID) =>
      devnet.publicClient(chain).readContract({ address: counterOf(chain), abi: counterAbi, functionName: 'number' });
    const execute = (chain: typeof HELD | typeof PAID, agent: string, by: bigint) => ({
      agent_id: agent,
      chain,
      target_contract: counterOf(chain),
      calldata: encodeFunctionData({ abi: counterAbi, functionName: 'incrementBy', args: [by] }),
      value: '0',
    });

    // The old build: its service, its admin socket's keys, its requests.
    const first = await spawnServiceChild(dataDir, secret, {}, old.root);
    children.push(first);
    const newKey = async (mode: 'sponsored' | 'manual') =>
      ((await callAdminSocket(dataDir, 'POST', '/keys', { mode, requestsPerSecond: 10_000, burst: 10_000 })) as { api_key: string }).api_key;
    const sponsoredKey = await newKey('sponsored');
    const manualKey = await newKey('manual');
    let sponsored: TestApi = apiClient(first.url, sponsoredKey);
    let manual: TestApi = apiClient(first.url, manualKey);

    // Finished before the upgrade (and the held wallet deployed, so the held bundle carries a plain operation).
    const done = await sponsored.post('/execute', execute(HELD, 'upgrade-held', 1n));
    expect(done.status, JSON.stringify(done.body)).toBe(200);
    expect((await sponsored.waitForTerminal(done.body.request_id)).status).toBe('confirmed');

    // Waiting for its payment.
    const paidBody = execute(PAID, 'upgrade-paid', 13n);
    const quote = await manual.post('/execute', paidBody, { 'idempotency-key': 'upgrade-paid' });
    expect(quote.status, JSON.stringify(quote.body)).toBe(402);
    expect(quote.body.error).toBe('payment_required');

    // Broadcasting while the chain mines nothing: the first bundle stays in the mempool, the wallet's next
    // operation waits behind it in the bundler (one operation of a sender in flight at a time).
    const heldBefore = await readCounter(HELD);
    const paidBefore = await readCounter(PAID);
    const heldBodies = [execute(HELD, 'upgrade-held', 7n), execute(HELD, 'upgrade-held', 11n)];
    const held: string[] = [];
    let second: Child;
    await rpc('evm_setAutomine', [false]);
    try {
      for (const [i, body] of heldBodies.entries()) {
        const r = await sponsored.post('/execute', body, { 'idempotency-key': `upgrade-held-${i}` });
        expect(r.status, JSON.stringify(r.body)).toBe(200);
        held.push(r.body.request_id);
      }
      await until('a bundle in the held chain\'s mempool', async () =>
        Number(((await rpc('txpool_status')) as { pending: string | number }).pending) >= 1 ? true : undefined,
      );
      // The phase the old build's store holds (GET /status reads it), asserted rather than hoped for.
      await until('both held requests broadcasting in the old build', async () => {
        const s = await Promise.all(held.map((id) => sponsored.get(`/status/${id}`)));
        return s.every((r) => r.body.status === 'broadcasting') ? true : undefined;
      });
      await killHard(first.child);

      // The new code on the same data directory and service secret: the old build's log replayed.
      second = await spawnServiceChild(dataDir, secret);
      children.push(second);
      sponsored = apiClient(second.url, sponsoredKey);
      manual = apiClient(second.url, manualKey);
      const status = async (api: TestApi, id: string) => {
        const r = await api.get(`/status/${id}`);
        expect(r.status, JSON.stringify(r.body)).toBe(200);
        return r.body;
      };
      expect(await status(sponsored, done.body.request_id)).toMatchObject({ status: 'confirmed', tx_hash: expect.any(String) });
      expect(await status(manual, quote.body.request_id)).toMatchObject({ status: 'payment_required' });
      for (const id of held) expect((await status(sponsored, id)).status).toBe('broadcasting');
      // A retry with the old build's Idempotency-Key lands on its request (matched by the hash it stored).
      const retry = await sponsored.post('/execute', heldBodies[0], { 'idempotency-key': 'upgrade-held-0' });
      expect(retry.status, JSON.stringify(retry.body)).toBe(200);
      expect(retry.body.request_id).toBe(held[0]);
    } finally {
      await rpc('evm_setAutomine', [true]);
    }
    await rpc('evm_mine');

    const heldStatuses = await Promise.all(held.map((id) => sponsored.waitForTerminal(id, 30_000)));
    expect(heldStatuses.map((s) => s.status)).toEqual(['confirmed', 'confirmed']);
    expect((await readCounter(HELD)) - heldBefore).toBe(18n); // 7 and 11, each exactly once

    // The 402 the old build answered, paid under the new code: the quoted amount, then the same call with the proof.
    const payer = await newPayer(devnet, PAID);
    const tx = await payer.pay('USDC', quote.body.payment_address, BigInt(quote.body.required_amount_raw.USDC));
    const paid = await manual.post('/execute', paidBody, {
      'idempotency-key': 'upgrade-paid',
      'x-payment-proof': JSON.stringify({ chain: PAID, payer: payer.address, token: 'USDC', tx_hash: tx, request_id: quote.body.request_id }),
    });
    expect(paid.status, JSON.stringify(paid.body)).toBe(200);
    expect(paid.body.request_id).toBe(quote.body.request_id);
    const paidStatus = await manual.waitForTerminal(quote.body.request_id, 30_000);
    expect(paidStatus.status).toBe('confirmed');
    expect((await readCounter(PAID)) - paidBefore).toBe(13n);

    // Each confirmed status names a successful transaction on its chain.
    for (const [chain, s] of [...heldStatuses.map((s) => [HELD, s] as const), [PAID, paidStatus] as const]) {
      const receipt = await devnet.publicClient(chain).getTransactionReceipt({ hash: s.tx_hash as Hex });
      expect(receipt.status).toBe('success');
    }
  }, 120_000);
});
