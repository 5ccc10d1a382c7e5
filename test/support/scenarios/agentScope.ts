/**
 * Agent-scoped keys, the same in both layouts: a key bound to one agent id (or a prefix) acts for it and is refused
 * for any other on every endpoint that names an agent, before anything is queued; a request by id is the key's only
 * while its agent stays in the scope.
 */
import { encodeFunctionData } from 'viem';
import { expect } from 'vitest';
import { counterAbi } from '../../../src/devnet/contracts.ts';
import type { ScenarioService } from '../service.ts';

type Json = Record<string, any>; // eslint-disable-line @typescript-eslint/no-explicit-any -- answers read loosely in tests

export async function agentScopeScenario(svc: ScenarioService): Promise<void> {
  const chain = 'base';
  const tag = Date.now().toString(36);
  const mine = `scoped-${tag}`;
  const other = `other-${tag}`;
  const body = (agent: string) => ({
    agent_id: agent,
    chain,
    target_contract: svc.devnet.chain(chain).testContracts.counter,
    calldata: encodeFunctionData({ abi: counterAbi, functionName: 'increment' }),
    value: '0',
  });
  const { api, clientId } = await svc.newKey('sponsored', { agentScope: { match: 'exact', agentId: mine } });

  // Its own agent: the wallet, an execution to confirmed, its status.
  expect((await api.get(`/wallet?agent_id=${mine}&chain=${chain}`)).status).toBe(200);
  const run = await api.post('/execute', body(mine));
  expect(run.status, JSON.stringify(run.body)).toBe(200);
  const id = run.body.request_id as string;
  expect((await api.waitForTerminal(id, 60_000)).status).toBe('confirmed');
  const keyed = await api.post('/execute', body(mine), { 'idempotency-key': `k-${tag}` });
  expect(keyed.status).toBe(200);

  // Any other agent id, on every endpoint that names one: 403 agent_not_allowed, and nothing made for it.
  const refused: [string, Promise<{ status: number; body: Json }>][] = [
    ['GET /wallet', api.get(`/wallet?agent_id=${other}&chain=${chain}`)],
    ['GET /wallet/balance', api.get(`/wallet/balance?agent_id=${other}&chain=${chain}`)],
    ['POST /simulate', api.post('/simulate', body(other))],
    ['POST /execute', api.post('/execute', body(other))],
    ['a protocol read', api.get(`/protocols/lend-a-v3/position?agent_id=${other}`)],
    ['a protocol action', api.post('/protocols/lend-a-v3/supply', { agent_id: other, token: 'WETH', amount: '1' })],
    ['its simulation', api.post('/protocols/lend-a-v3/supply/simulate', { agent_id: other, token: 'WETH', amount: '1' })],
    // Case-sensitive, and no longer id: the exact one only.
    ['another case', api.get(`/wallet?agent_id=${mine.toUpperCase()}&chain=${chain}`)],
    ['a longer id', api.get(`/wallet?agent_id=${mine}x&chain=${chain}`)],
  ];
  for (const [what, answer] of refused) {
    const r = await answer;
    expect([what, r.status, r.body.error, r.body.field]).toEqual([what, 403, 'agent_not_allowed', 'agent_id']);
  }
  const made = (await svc.store.list('ExecutionRequest')).items.filter((r) => r.spec.apiClient === clientId);
  expect([...new Set(made.map((r) => r.spec.agentId))]).toEqual([mine]);

  // A prefix: any agent id of the group, nothing outside it.
  const team = await svc.newKey('sponsored', { agentScope: { match: 'prefix', agentId: `team-${tag}/` } });
  expect((await team.api.get(`/wallet?agent_id=team-${tag}/scout&chain=${chain}`)).status).toBe(200);
  expect((await team.api.get(`/wallet?agent_id=team-${tag}x/scout&chain=${chain}`)).status).toBe(403);

  // The operator narrows the key to another agent: the first agent's request is no longer the key's to see or cancel.
  const key = await svc.store.get('ApiClient', clientId);
  await svc.store.update({ ...key, spec: { ...key.spec, agentScope: { match: 'exact', agentId: other } } });
  // It takes effect when the gateway's watch of the keys delivers the change (src/gateway/apiClientView.ts).
  await expect.poll(async () => (await api.get(`/status/${id}`)).status, { timeout: 10_000, interval: 20 }).toBe(404);
  expect((await api.post(`/status/${id}/cancel`, {})).status).toBe(404);
  expect((await api.get(`/wallet?agent_id=${other}&chain=${chain}`)).status).toBe(200);
  // Its Idempotency-Key reused for the agent it now acts for: refused, without naming the first agent's request.
  const reused = await api.post('/execute', body(other), { 'idempotency-key': `k-${tag}` });
  expect([reused.status, reused.body.error, reused.body.request_id]).toEqual([422, 'idempotency_key_mismatch', undefined]);
}
