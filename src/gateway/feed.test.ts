import { afterAll, beforeAll, describe, expect, it, vi } from 'vitest';
import { ANNOTATIONS, idempotentRequestId, newRequestId } from '../api/v1alpha1/index.ts';
import { executionRequest, openTestGateway, writeStatus, type TestGateway } from './testing/harness.ts';

describe('GET /feed/recent (public)', () => {
  let gw: TestGateway;
  let apiKey: string;
  let clientId: string;
  const ids: string[] = [];
  const secrets = {
    agentId: 'agent-secret-7f3a',
    strategyId: 'strategy-secret-91c2',
    callbackUrl: 'https://hooks.secret-callback.example/x',
  };
  const wallet = `0x${'ab'.repeat(20)}`;

  beforeAll(async () => {
    gw = await openTestGateway();
    ({ apiKey, clientId } = await gw.newKey({ mode: 'sponsored' }));
    // 25 requests, strictly increasing ids (ULIDs of increasing times), all carrying tenant-identifying data.
    const t0 = Date.now();
    for (let i = 0; i < 25; i++) {
      const id = newRequestId(t0 + i);
      ids.push(id);
      await gw.store.create(executionRequest(id, clientId, secrets));
    }
    await writeStatus(gw.store, ids[24]!, () => ({
      phase: 'Confirmed',
      smartWalletAddress: wallet,
      txHash: `0x${'cd'.repeat(32)}`,
      completionTime: '2030-01-01T00:00:00Z',
    }));
  });
  afterAll(() => gw.close());

  const feed = async (query = '') => {
    const res = await gw.app.inject({ url: `/feed/recent${query}` });
    expect(res.statusCode).toBe(200);
    return res;
  };

  it('lists the newest executions first, 20 by default', async () => {
    await vi.waitFor(async () => expect((await feed()).json().executions[0].status).toBe('confirmed'));
    const { executions } = (await feed()).json();
    expect(executions).toHaveLength(20);
    expect(executions[0]).toEqual({
      status: 'confirmed',
      chain: 'base',
      tx_hash: `0x${'cd'.repeat(32)}`,
      calls: 1,
      created_at: expect.stringMatching(/Z$/),
      updated_at: '2030-01-01T00:00:00.000Z',
    });
    expect(executions.slice(1).every((e: { status: string }) => e.status === 'pending')).toBe(true);
  });

  it('honours limit', async () => {
    expect((await feed('?limit=3')).json().executions).toHaveLength(3);
    expect((await feed('?limit=100')).json().executions).toHaveLength(25);
  });

  it('leaks nothing that identifies a key, an agent, a wallet, a callback or a strategy', async () => {
    const body = (await feed('?limit=100')).body;
    for (const secret of [apiKey, clientId, secrets.agentId, secrets.strategyId, 'secret-callback', wallet, ...ids]) {
      expect(body).not.toContain(secret);
    }
    for (const field of ['agent_id', 'request_id', 'smart_wallet_address', 'callback_url', 'strategy_id', 'api_client']) {
      expect(body).not.toContain(field);
    }
  });

  it('drops deleted requests', async () => {
    await gw.store.delete('ExecutionRequest', ids[24]!);
    await vi.waitFor(async () => expect((await feed('?limit=100')).json().executions).toHaveLength(24));
    expect((await feed()).json().executions[0].status).toBe('pending');
  });
});

describe('GET /feed/recent: order', () => {
  let gw: TestGateway;
  beforeAll(async () => {
    gw = await openTestGateway();
  });
  afterAll(() => gw.close());

  it('is newest first by creation time, for requests named by an Idempotency-Key (names in no time order) too', async () => {
    const { clientId } = await gw.newKey({ mode: 'sponsored' });
    // The store's creationTimestamp has whole seconds: these all share one (or two), so only the accepted
    // time (milliseconds) orders them; their names are hashes, in no time order.
    const t0 = Date.now();
    const accepted: string[] = [];
    for (let i = 0; i < 12; i++) {
      const request = executionRequest(idempotentRequestId(clientId, `key-${i}`), clientId);
      accepted.push(new Date(t0 + i).toISOString());
      request.metadata.annotations = { [ANNOTATIONS.accepted]: newRequestId(t0 + i) };
      await gw.store.create(request);
    }
    await vi.waitFor(async () => expect((await gw.app.inject({ url: '/feed/recent?limit=100' })).json().executions).toHaveLength(12));
    const { executions } = (await gw.app.inject({ url: '/feed/recent?limit=100' })).json();
    expect(executions.map((e: { created_at: string }) => e.created_at)).toEqual([...accepted].reverse());
  });
});
