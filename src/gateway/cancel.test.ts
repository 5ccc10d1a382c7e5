import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { SignedUserOperation } from '../api/v1alpha1/index.ts';
import { executionRequest, openTestGateway, writeStatus, type TestGateway } from './testing/harness.ts';

/**
 * POST /status/:id/cancel at the gateway alone (no controller: the tests write its decisions): what it records,
 * what it answers while the controller has not decided (202), and from each decision (200, 409); who may ask.
 */
describe('POST /status/:id/cancel (the gateway)', () => {
  let gw: TestGateway;
  let alice: { apiKey: string; clientId: string };
  let bob: { apiKey: string; clientId: string };
  beforeAll(async () => {
    gw = await openTestGateway({ decisionTimeoutMs: 300 });
    alice = await gw.newKey();
    bob = await gw.newKey();
  });
  afterAll(() => gw.close());

  const cancel = (key: string, id: string) => gw.app.inject({ method: 'POST', url: `/status/${id}/cancel`, headers: { 'x-api-key': key } });
  const op: SignedUserOperation = {
    sender: `0x${'aa'.repeat(20)}`,
    nonce: '3',
    callData: '0x',
    callGasLimit: '1',
    verificationGasLimit: '1',
    preVerificationGas: '1',
    maxFeePerGas: '1',
    maxPriorityFeePerGas: '1',
    signature: '0x',
    hash: `0x${'ee'.repeat(32)}`,
    entryPoint: `0x${'bb'.repeat(20)}`,
    chainId: 8453,
  };

  it('records the cancel once and answers 202 while the controller has not decided; 200 once it has, the same again', async () => {
    await gw.store.create(executionRequest('req-cancel-wait', alice.clientId));
    const first = await cancel(alice.apiKey, 'req-cancel-wait');
    expect(first.statusCode).toBe(202);
    expect(first.json()).toMatchObject({ request_id: 'req-cancel-wait', status: 'pending' });
    const asked = first.json().cancel_requested_at;
    expect((await gw.store.get('ExecutionRequest', 'req-cancel-wait')).spec.cancelRequestedTime).toBe(asked);

    const again = await cancel(alice.apiKey, 'req-cancel-wait');
    expect(again.statusCode).toBe(202);
    const stored = await gw.store.get('ExecutionRequest', 'req-cancel-wait');
    expect(stored.spec.cancelRequestedTime).toBe(asked); // asked again: nothing rewritten
    expect(stored.metadata.generation).toBe(2);

    // The controller's decision, arriving while a cancel waits for it: the answer comes from it.
    const waiting = cancel(alice.apiKey, 'req-cancel-wait');
    await new Promise((r) => setTimeout(r, 50));
    await writeStatus(gw.store, 'req-cancel-wait', () => ({
      phase: 'Failed',
      failure: { code: 'cancelled', message: 'cancelled by its caller' },
      history: [{ phase: 'Failed', time: new Date().toISOString() }],
    }));
    const decided = await waiting;
    expect(decided.statusCode).toBe(200);
    expect(decided.json()).toMatchObject({ status: 'failed', failure: { code: 'cancelled' }, cancel_requested_at: asked });
    expect((await cancel(alice.apiKey, 'req-cancel-wait')).json()).toEqual(decided.json());
  });

  it('a signed request: 409 not_cancellable, reason signed, when and its nonce; nothing recorded', async () => {
    await gw.store.create(executionRequest('req-cancel-signed', alice.clientId));
    await writeStatus(gw.store, 'req-cancel-signed', () => ({ phase: 'Queued', userOperation: op, queuedTime: '2030-01-01T00:00:01.000Z' }));
    const r = await cancel(alice.apiKey, 'req-cancel-signed');
    expect(r.statusCode).toBe(409);
    expect(r.json()).toEqual({
      error: 'not_cancellable',
      message: expect.stringContaining('its operation was signed at 2030-01-01T00:00:01.000Z (nonce 3)'),
      request_id: 'req-cancel-signed',
      reason: 'signed',
      status: 'queued',
      signed_at: '2030-01-01T00:00:01.000Z',
      tx_hash: null,
    });
    expect((await gw.store.get('ExecutionRequest', 'req-cancel-signed')).spec.cancelRequestedTime).toBeUndefined();
  });

  it('a request that failed for another reason first: 409, reason finished, with its failure', async () => {
    await gw.store.create(executionRequest('req-cancel-failed', alice.clientId));
    await writeStatus(gw.store, 'req-cancel-failed', () => ({ phase: 'Failed', failure: { code: 'simulation_reverted', message: 'reverted' } }));
    const r = await cancel(alice.apiKey, 'req-cancel-failed');
    expect(r.statusCode).toBe(409);
    expect(r.json()).toMatchObject({ error: 'not_cancellable', reason: 'finished', status: 'failed', signed_at: null });
    expect(r.json().message).toContain('already finished as failed (simulation_reverted)');
  });

  it("another key's request, an unknown id and a malformed one: the same 404 as GET /status; no key: 401", async () => {
    await gw.store.create(executionRequest('req-cancel-alices', alice.clientId));
    const lookup = await gw.app.inject({ url: '/status/req-cancel-alices', headers: { 'x-api-key': bob.apiKey } });
    for (const id of ['req-cancel-alices', 'req-cancel-nobody', 'sim_01abc', 'UPPER']) {
      const r = await cancel(bob.apiKey, id);
      expect(r.statusCode, id).toBe(404);
      expect(r.json(), id).toEqual(lookup.json());
    }
    expect((await gw.store.get('ExecutionRequest', 'req-cancel-alices')).spec.cancelRequestedTime).toBeUndefined();
    expect((await gw.app.inject({ method: 'POST', url: '/status/req-cancel-alices/cancel' })).statusCode).toBe(401);
  });
});
