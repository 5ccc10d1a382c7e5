/**
 * A kill -9 between a budget's reservation and the broadcast: a request of a manual key holds its reservation while
 * it waits for its payment (reserved, nothing sent). The service is killed there and restarted from its data dir:
 * the reservation still counts (a third request does not fit), and once paid and executed the request counts once,
 * at its actual cost.
 */
import { expect, it } from 'vitest';
import { encodeFunctionData, type Address } from 'viem';
import { callAdminSocket } from '../../src/admin/socket.ts';
import { counterAbi } from '../../src/devnet/contracts.ts';
import { killHard, spawnServiceChild } from '../support/child.ts';
import { newServiceSecret, tempDir, testDevnet } from '../support/env.ts';
import { apiClient } from '../support/http.ts';
import { newPayer } from '../support/payer.ts';

const CHAIN = 'base';

it('a kill -9 while a reservation waits for its payment neither loses nor doubles the spend', { timeout: 180_000 }, async () => {
  const devnet = testDevnet();
  const counter = devnet.chain(CHAIN).testContracts.counter;
  const body = (agent: string) => ({ agent_id: agent, chain: CHAIN, target_contract: counter, calldata: encodeFunctionData({ abi: counterAbi, functionName: 'increment' }), value: '0' });
  const dataDir = tempDir('aw-budget-crash-');
  const secret = newServiceSecret();

  const first = await spawnServiceChild(dataDir, secret);
  const { api_key, key } = (await callAdminSocket(dataDir, 'POST', '/keys', { mode: 'manual', requestsPerSecond: 10_000, burst: 10_000 })) as { api_key: string; key: { id: string } };
  await callAdminSocket(dataDir, 'PUT', '/policies/two-a-day', {
    apiClient: key.id,
    rules: [{ name: 'counter', action: 'accept', targets: [counter] }],
    budgets: [{ name: 'daily', window: '24h', count: 2 }],
  });
  let api = apiClient(first.url, api_key);
  await expect.poll(async () => (await api.post('/policy/evaluate', body('a'))).body.budgets?.length, { timeout: 10_000, interval: 50 }).toBe(1);
  const waiting = await api.post('/execute', body('crash-a'));
  expect(waiting.status, JSON.stringify(waiting.body)).toBe(402); // reserved, waiting for its payment: nothing sent
  const id = waiting.body.request_id as string;
  await killHard(first.child);

  const second = await spawnServiceChild(dataDir, secret);
  try {
    api = apiClient(second.url, api_key);
    expect((await api.post('/execute', body('crash-b'))).status).toBe(402); // the second of two
    const third = await api.post('/execute', body('crash-c'));
    expect(third.status, JSON.stringify(third.body)).toBe(403); // the first's reservation survived the kill
    expect(third.body).toMatchObject({ error: 'policy_denied', budget: 'daily' });
    expect(third.body.message).toMatch(/2 executions per 24h for the key, 2 already in the window/);

    // Paid after the restart: executed once, and still one of the two.
    const quote = waiting.body;
    const payer = await newPayer(devnet, CHAIN);
    const tx = await payer.pay('USDC', quote.payment_address as Address, BigInt(quote.required_amount_raw.USDC));
    const paid = await api.post('/execute', body('crash-a'), { 'x-payment-proof': JSON.stringify({ payer: payer.address, token: 'USDC', chain: CHAIN, tx_hash: tx, request_id: id }) });
    expect(paid.status, JSON.stringify(paid.body)).toBe(200);
    expect((await api.waitForTerminal(id, 60_000)).status).toBe('confirmed');
    await expect
      .poll(async () => (await api.get('/policy?agent_id=crash-a')).body.policies[0].budgets[0].spent?.count, { timeout: 15_000, interval: 200 })
      .toBe(2);
    expect((await api.post('/execute', body('crash-d'))).status).toBe(403);
  } finally {
    await killHard(second.child);
  }
});
