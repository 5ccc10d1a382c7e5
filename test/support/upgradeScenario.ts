/**
 * The upgrade scenario both layouts run (test/e2e/upgrade.test.ts, test/cluster/upgrade.test.ts): the old build's
 * service leaves requests on its store — one confirmed, one waiting for its payment (402), two broadcasting (a
 * chain held with automine off: one bundle in its mempool, the same wallet's next operation waiting behind it in
 * the bundler) — then the layout switches to the new code on the same data, and every one of them finishes:
 * GET /status answers for all, an Idempotency-Key retry lands on the old request, the held ones confirm exactly once
 * (the counter moves by their sum), the 402 is paid (the quoted amount, then the same call with its proof) and
 * confirms, each confirmed status names a successful transaction.
 */
import { expect } from 'vitest';
import { encodeFunctionData, type Hex } from 'viem';
import { counterAbi } from '../../src/devnet/contracts.ts';
import type { testDevnet } from './env.ts';
import { apiClient, type TestApi } from './http.ts';
import { newPayer } from './payer.ts';
import { until } from './until.ts';

/** The chain held while the old build runs, and the one the 402 is paid on. */
export const HELD_CHAIN = 'arbitrum';
const PAID_CHAIN = 'base';
type ScenarioChain = typeof HELD_CHAIN | typeof PAID_CHAIN;

export interface UpgradeLayout {
  /** The old build's gateway. */
  oldUrl: string;
  /** An API key of the given mode (made while the old build runs). */
  newKey(mode: 'sponsored' | 'manual'): Promise<string>;
  /** The phase the store holds for a request, read beside the old gateway's answer (optional). */
  storedPhase?(requestId: string): Promise<string | undefined>;
  /** Stops the old build and starts the new code on its data: the new gateway's URL. */
  upgrade(): Promise<string>;
}

/** Sets automine of the held chain; the scenario turns it back on, and a test's afterAll should too. */
export const setHeldChainAutomine = (devnet: ReturnType<typeof testDevnet>, on: boolean) =>
  devnet.publicClient(HELD_CHAIN).request({ method: 'evm_setAutomine' as never, params: [on] as never });

export async function runUpgradeScenario(devnet: ReturnType<typeof testDevnet>, layout: UpgradeLayout): Promise<void> {
  const rpc = (method: string, params: unknown[] = []): Promise<unknown> =>
    devnet.publicClient(HELD_CHAIN).request({ method: method as never, params: params as never });
  const counterOf = (chain: ScenarioChain) => devnet.chain(chain).testContracts.counter;
  const readCounter = (chain: ScenarioChain) =>
    devnet.publicClient(chain).readContract({ address: counterOf(chain), abi: counterAbi, functionName: 'number' });
  const execute = (chain: ScenarioChain, agent: string, by: bigint) => ({
    agent_id: agent,
    chain,
    target_contract: counterOf(chain),
    calldata: encodeFunctionData({ abi: counterAbi, functionName: 'incrementBy', args: [by] }),
    value: '0',
  });

  const sponsoredKey = await layout.newKey('sponsored');
  const manualKey = await layout.newKey('manual');
  let sponsored: TestApi = apiClient(layout.oldUrl, sponsoredKey);
  let manual: TestApi = apiClient(layout.oldUrl, manualKey);

  // Finished before the upgrade (and the held wallet deployed, so the held bundle carries a plain operation).
  const done = await sponsored.post('/execute', execute(HELD_CHAIN, 'upgrade-held', 1n));
  expect(done.status, JSON.stringify(done.body)).toBe(200);
  expect((await sponsored.waitForTerminal(done.body.request_id)).status).toBe('confirmed');

  // Waiting for its payment.
  const paidBody = execute(PAID_CHAIN, 'upgrade-paid', 13n);
  const quote = await manual.post('/execute', paidBody, { 'idempotency-key': 'upgrade-paid' });
  expect(quote.status, JSON.stringify(quote.body)).toBe(402);
  expect(quote.body.error).toBe('payment_required');

  const heldBefore = await readCounter(HELD_CHAIN);
  const paidBefore = await readCounter(PAID_CHAIN);
  const heldBodies = [execute(HELD_CHAIN, 'upgrade-held', 7n), execute(HELD_CHAIN, 'upgrade-held', 11n)];
  const held: string[] = [];
  await setHeldChainAutomine(devnet, false);
  try {
    for (const [i, body] of heldBodies.entries()) {
      const r = await sponsored.post('/execute', body, { 'idempotency-key': `upgrade-held-${i}` });
      expect(r.status, JSON.stringify(r.body)).toBe(200);
      held.push(r.body.request_id);
    }
    await until("a bundle in the held chain's mempool", async () =>
      Number(((await rpc('txpool_status')) as { pending: string | number }).pending) >= 1 ? true : undefined,
    );
    // The phase the old build stored, asserted rather than hoped for.
    await until('both held requests broadcasting in the old build', async () => {
      const s = await Promise.all(held.map((id) => sponsored.get(`/status/${id}`)));
      return s.every((r) => r.body.status === 'broadcasting') ? true : undefined;
    });
    if (layout.storedPhase) {
      for (const id of held) expect(await layout.storedPhase(id)).toBe('Broadcasting');
      expect(await layout.storedPhase(quote.body.request_id)).toBe('PaymentRequired');
    }

    const url = await layout.upgrade();
    sponsored = apiClient(url, sponsoredKey);
    manual = apiClient(url, manualKey);
    const status = async (api: TestApi, id: string) => {
      const r = await api.get(`/status/${id}`);
      expect(r.status, JSON.stringify(r.body)).toBe(200);
      return r.body;
    };
    expect(await status(sponsored, done.body.request_id)).toMatchObject({ status: 'confirmed', tx_hash: expect.any(String) });
    expect(await status(manual, quote.body.request_id)).toMatchObject({ status: 'payment_required' });
    for (const id of held) expect((await status(sponsored, id)).status).toBe('broadcasting');
    // A retry with the old build's Idempotency-Key lands on its request (matched by the hash the old build stored).
    const retry = await sponsored.post('/execute', heldBodies[0], { 'idempotency-key': 'upgrade-held-0' });
    expect(retry.status, JSON.stringify(retry.body)).toBe(200);
    expect(retry.body.request_id).toBe(held[0]);
  } finally {
    await setHeldChainAutomine(devnet, true);
  }
  await rpc('evm_mine');

  const heldStatuses = await Promise.all(held.map((id) => sponsored.waitForTerminal(id, 30_000)));
  expect(heldStatuses.map((s) => s.status)).toEqual(['confirmed', 'confirmed']);
  expect((await readCounter(HELD_CHAIN)) - heldBefore).toBe(18n); // 7 and 11, each exactly once

  // The 402 the old build answered, paid under the new code.
  const payer = await newPayer(devnet, PAID_CHAIN);
  const tx = await payer.pay('USDC', quote.body.payment_address, BigInt(quote.body.required_amount_raw.USDC));
  const paid = await manual.post('/execute', paidBody, {
    'idempotency-key': 'upgrade-paid',
    'x-payment-proof': JSON.stringify({ chain: PAID_CHAIN, payer: payer.address, token: 'USDC', tx_hash: tx, request_id: quote.body.request_id }),
  });
  expect(paid.status, JSON.stringify(paid.body)).toBe(200);
  expect(paid.body.request_id).toBe(quote.body.request_id);
  const paidStatus = await manual.waitForTerminal(quote.body.request_id, 30_000);
  expect(paidStatus.status).toBe('confirmed');
  expect((await readCounter(PAID_CHAIN)) - paidBefore).toBe(13n);

  for (const [chain, s] of [...heldStatuses.map((s) => [HELD_CHAIN, s] as const), [PAID_CHAIN, paidStatus] as const]) {
    const receipt = await devnet.publicClient(chain).getTransactionReceipt({ hash: s.tx_hash as Hex });
    expect(receipt.status).toBe('success');
  }
}
