import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { executionRequest, openTestGateway, writeStatus, type TestGateway } from './testing/harness.ts';

describe('GET /status/:id (spec §2.3)', () => {
  let gw: TestGateway;
  let alice: { apiKey: string; clientId: string };
  let bob: { apiKey: string; clientId: string };
  beforeAll(async () => {
    gw = await openTestGateway();
    alice = await gw.newKey();
    bob = await gw.newKey();
  });
  afterAll(() => gw.close());

  const status = (key: string, id: string) => gw.app.inject({ url: `/status/${id}`, headers: { 'x-api-key': key } });

  it('a new request is pending; created_at = updated_at = creation time', async () => {
    const created = await gw.store.create(executionRequest('req-status-new', alice.clientId, { strategyId: 's-1' }));
    const res = await status(alice.apiKey, 'req-status-new');
    expect(res.statusCode).toBe(200);
    const createdAt = new Date(created.metadata.creationTimestamp!).toISOString();
    expect(res.json()).toEqual({
      request_id: 'req-status-new',
      status: 'pending',
      chain: 'base',
      tx_hash: null,
      cost_usd: 0,
      created_at: createdAt,
      updated_at: createdAt,
      agent_id: 'agent-1',
      strategy_id: 's-1',
      smart_wallet_address: null,
      calls: 1,
      estimated_gas: null,
      block_number: null,
      gas_used: null,
      failure: null,
      credit: null,
      history: [{ status: 'pending', at: createdAt }],
    });
  });

  it('reports phase as snake_case status, the tx and the last transition time as updated_at', async () => {
    await gw.store.create(executionRequest('req-status-done', alice.clientId));
    const wallet = `0x${'ab'.repeat(20)}`;
    const txHash = `0x${'cd'.repeat(32)}`;
    await writeStatus(gw.store, 'req-status-done', () => ({
      phase: 'Confirmed',
      smartWalletAddress: wallet,
      estimatedGas: 150000,
      estimatedCostUsd: 0,
      costUsd: 0,
      txHash,
      blockNumber: '42',
      gasUsed: '120000',
      queuedTime: '2030-01-01T00:00:01Z',
      completionTime: '2030-01-01T00:00:05Z',
      conditions: [
        { type: 'Simulated', status: 'True', reason: 'SimulationSucceeded', message: '', lastTransitionTime: '2030-01-01T00:00:01Z' },
        { type: 'Succeeded', status: 'True', reason: 'Confirmed', message: '', lastTransitionTime: '2030-01-01T00:00:07Z' },
      ],
    }));
    const json = (await status(alice.apiKey, 'req-status-done')).json();
    expect(json).toMatchObject({
      status: 'confirmed',
      tx_hash: txHash,
      cost_usd: 0,
      smart_wallet_address: wallet,
      estimated_gas: 150000,
      block_number: '42',
      gas_used: '120000',
      updated_at: '2030-01-01T00:00:07.000Z',
    });
    expect(json.created_at).toMatch(/^\d{4}-\d\d-\d\dT\d\d:\d\d:\d\d\.\d{3}Z$/);
    // Stored before transitions were kept (an upgrade): its creation, and its current state at updated_at.
    expect(json.history).toEqual([
      { status: 'pending', at: json.created_at },
      { status: 'confirmed', at: '2030-01-01T00:00:07.000Z' },
    ]);
  });

  it('history: pending at creation, then each stored transition in order', async () => {
    await gw.store.create(executionRequest('req-status-history', alice.clientId));
    await writeStatus(gw.store, 'req-status-history', () => ({
      phase: 'Broadcasting',
      history: [
        { phase: 'Queued', time: '2030-01-01T00:00:01Z' },
        { phase: 'Broadcasting', time: '2030-01-01T00:00:01.250Z' },
      ],
    }));
    const json = (await status(alice.apiKey, 'req-status-history')).json();
    expect(json.history).toEqual([
      { status: 'pending', at: json.created_at },
      { status: 'queued', at: '2030-01-01T00:00:01.000Z' },
      { status: 'broadcasting', at: '2030-01-01T00:00:01.250Z' },
    ]);
    expect(json.cancel_requested_at).toBeUndefined();
  });

  it('a failed request carries its failure', async () => {
    await gw.store.create(executionRequest('req-status-failed', alice.clientId));
    await writeStatus(gw.store, 'req-status-failed', () => ({
      phase: 'Failed',
      failure: { code: 'simulation_reverted', message: 'call 0 reverted', revertReason: 'Gate: closed' },
      completionTime: '2030-01-02T00:00:00Z',
    }));
    expect((await status(alice.apiKey, 'req-status-failed')).json()).toMatchObject({
      status: 'failed',
      updated_at: '2030-01-02T00:00:00.000Z',
      failure: { code: 'simulation_reverted', message: 'call 0 reverted', revert_reason: 'Gate: closed' },
    });
  });

  it("another key's request is 404, exactly like an unknown id (no existence leak)", async () => {
    const other = await status(bob.apiKey, 'req-status-new');
    const unknown = await status(bob.apiKey, 'req-does-not-exist');
    expect(other.statusCode).toBe(404);
    expect(other.json()).toEqual({ error: 'not_found', message: expect.any(String) });
    expect(other.json()).toEqual(unknown.json());
  });

  it('ids that cannot be request ids (e.g. a simulation id) are 404', async () => {
    for (const id of ['sim_01hzzzzzzzzzzzzzzzzzzzzzzz', 'REQ-UPPER', 'a'.repeat(300), '%20']) {
      const res = await status(alice.apiKey, id);
      expect(res.statusCode, id).toBe(404);
      expect(res.json().error).toBe('not_found');
    }
  });
});
