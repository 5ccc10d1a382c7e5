/**
 * Cancel and history in the cluster layout: the gateway (as the chart's ServiceAccount) records the cancel on the
 * ExecutionRequest on the API server, the leading controller ends the request unsigned and the gateway answers
 * from what it decided; a confirmed request's cancel is 409, with its history in order; another key's is 404.
 * Cancels racing the signing: each request ends exactly one way.
 */
import { randomUUID } from 'node:crypto';
import { afterAll, beforeAll, expect, it } from 'vitest';
import { encodeFunctionData } from 'viem';
import { requestIdForIdempotencyKey } from '../../src/client/requestIds.ts';
import { counterAbi } from '../../src/devnet/contracts.ts';
import { startTestCluster, type TestCluster } from '../support/cluster.ts';
import { agentScopeScenario } from '../support/scenarios/agentScope.ts';

const CHAIN = 'base';
let cluster: TestCluster;
beforeAll(async () => {
  cluster = await startTestCluster();
});
afterAll(async () => {
  await cluster?.stop();
});

const body = (agent: string) => ({
  agent_id: agent,
  chain: CHAIN,
  target_contract: cluster.devnet.chain(CHAIN).testContracts.counter,
  calldata: encodeFunctionData({ abi: counterAbi, functionName: 'increment' }),
  value: '0',
});

it('cancels a request waiting for its payment: failed (cancelled), unsigned, the same answer again; 404 for another key', async () => {
  const { api } = await cluster.newKey('manual');
  const quote = (await api.post('/execute', body('c-cancel'))).body;
  expect(quote).toMatchObject({ error: 'payment_required', chain: CHAIN });
  const id = quote.request_id as string;

  const other = await cluster.newKey('manual');
  expect((await other.api.post(`/status/${id}/cancel`, undefined)).status).toBe(404);

  const cancelled = await api.post(`/status/${id}/cancel`, undefined);
  expect(cancelled.status, JSON.stringify(cancelled.body)).toBe(200);
  expect(cancelled.body).toMatchObject({ request_id: id, status: 'failed', tx_hash: null, failure: { code: 'cancelled' } });
  expect(cancelled.body.history.map((h: { status: string }) => h.status)).toEqual(['pending', 'payment_required', 'failed']);
  expect((await api.post(`/status/${id}/cancel`, undefined)).body).toEqual(cancelled.body);
  const stored = await cluster.store.get('ExecutionRequest', id);
  expect(stored.spec.cancelRequestedTime).toBeDefined(); // kept by the API server: the CRD's schema has it
  expect(stored.status?.userOperation).toBeUndefined();
  expect(stored.status?.history?.map((h) => h.phase)).toEqual(['PaymentRequired', 'Failed']);
});

it('a confirmed request cannot be cancelled (409, why); its history is in order', async () => {
  const { api } = await cluster.newKey('sponsored');
  const r = await api.post('/execute', body('c-late'));
  expect(r.status, JSON.stringify(r.body)).toBe(200);
  const done = await api.waitForTerminal(r.body.request_id, 60_000);
  expect(done.status).toBe('confirmed');
  expect(done.history.map((h: { status: string }) => h.status)).toEqual(['pending', 'queued', 'broadcasting', 'confirmed']);
  const times = done.history.map((h: { at: string }) => Date.parse(h.at));
  expect(times).toEqual([...times].sort((a, b) => a - b));
  const late = await api.post(`/status/${done.request_id}/cancel`, undefined);
  expect(late.status).toBe(409);
  expect(late.body).toMatchObject({ error: 'not_cancellable', reason: 'finished', status: 'confirmed', tx_hash: done.tx_hash });
});

it('cancels racing the signing: every request ends cancelled with no operation, or runs with the cancel answered 409', async () => {
  const { api, apiKey } = await cluster.newKey('sponsored');
  const runs = await Promise.all(
    Array.from({ length: 8 }, async (_, i) => {
      const key = randomUUID();
      const id = requestIdForIdempotencyKey(apiKey, key)!;
      const [, cancel] = await Promise.all([
        api.post('/execute', body(`c-racer-${i % 2}`), { 'idempotency-key': key }),
        (async () => {
          await new Promise((res) => setTimeout(res, i * 3));
          for (;;) {
            const c = await api.post(`/status/${id}/cancel`, undefined);
            if (c.status !== 404) return c;
            await new Promise((res) => setTimeout(res, 2));
          }
        })(),
      ]);
      return { id, cancel };
    }),
  );
  for (const { id, cancel } of runs) {
    const final = await api.waitForTerminal(id, 60_000);
    const stored = await cluster.store.get('ExecutionRequest', id);
    if (final.status === 'failed') {
      expect(final.failure.code).toBe('cancelled');
      expect(cancel.status).toBe(200);
      expect(stored.status?.userOperation).toBeUndefined();
    } else {
      expect(final.status).toBe('confirmed');
      expect(cancel.status, JSON.stringify(cancel.body)).toBe(409);
      expect(stored.status?.userOperation).toBeDefined();
    }
  }
});

// The ApiClient's agentScope through the real API server (the CRD's schema keeps it), enforced by the gateway process.
it('an agent-scoped key acts for its agent ids only; status and cancel follow the scope', { timeout: 120_000 }, () => agentScopeScenario(cluster));
