/**
 * Cancel (POST /status/:id/cancel) and the status record's history, end to end: a request cancelled before it is
 * signed ends `failed` (`cancelled`) with nothing on chain; after signing, or once finished, the cancel is 409;
 * another key's request is 404; asking again answers the same. Cancels racing the signing: each request ends
 * exactly one way. Runs in the embedded layout; test/cluster/cancel.test.ts runs the main path in the cluster one.
 */
import { randomUUID } from 'node:crypto';
import { encodeFunctionData } from 'viem';
import { describe, expect, it } from 'vitest';
import { counterAbi } from '../../src/devnet/contracts.ts';
import { requestIdForIdempotencyKey } from '../../src/client/requestIds.ts';
import type { TestApi } from '../support/http.ts';
import { useTestService } from '../support/service.ts';

const service = useTestService();

const increment = (agent: string) => ({
  agent_id: agent,
  chain: 'ethereum',
  target_contract: service().devnet.chain('ethereum').testContracts.counter,
  calldata: encodeFunctionData({ abi: counterAbi, functionName: 'increment' }),
  value: '0',
});

describe('cancel before signing', () => {
  it('ends a request waiting for its payment as failed (cancelled), idempotently, with nothing on chain', async () => {
    const { api } = await service().newKey('manual');
    const idempotencyKey = randomUUID();
    const first = await api.post('/execute', increment('cancel-me'), { 'idempotency-key': idempotencyKey });
    expect(first.status, JSON.stringify(first.body)).toBe(402);
    const id = first.body.request_id as string;

    const cancelled = await api.post(`/status/${id}/cancel`, undefined);
    expect(cancelled.status, JSON.stringify(cancelled.body)).toBe(200);
    expect(cancelled.body).toMatchObject({ request_id: id, status: 'failed', tx_hash: null, failure: { code: 'cancelled' } });
    expect(cancelled.body.cancel_requested_at).toEqual(expect.any(String));
    expect(cancelled.body.history.map((h: { status: string }) => h.status)).toEqual(['pending', 'payment_required', 'failed']);

    // Asked again: the same answer, and nothing moved.
    const again = await api.post(`/status/${id}/cancel`, undefined);
    expect(again.status).toBe(200);
    expect(again.body).toEqual(cancelled.body);
    expect((await api.get(`/status/${id}`)).body).toEqual(cancelled.body);

    const stored = await service().store.get('ExecutionRequest', id);
    expect(stored.status?.userOperation).toBeUndefined();
    expect(stored.status?.phase).toBe('Failed');

    // The same execute replayed under its Idempotency-Key: the cancelled request, said so.
    const replay = await api.post('/execute', increment('cancel-me'), { 'idempotency-key': idempotencyKey });
    expect(replay.status, JSON.stringify(replay.body)).toBe(409);
    expect(replay.body).toMatchObject({ error: 'request_cancelled', request_id: id });
  });

  it("answers another key's request, and an unknown one, 404 as GET /status does, and leaves it as it was", async () => {
    const owner = await service().newKey('manual');
    const first = await owner.api.post('/execute', increment('not-yours'));
    expect(first.status).toBe(402);
    const id = first.body.request_id as string;

    const other = await service().newKey('manual');
    const foreign = await other.api.post(`/status/${id}/cancel`, undefined);
    const unknown = await other.api.post(`/status/req-01jzzzzzzzzzzzzzzzzzzzzzzz/cancel`, undefined);
    const lookup = await other.api.get(`/status/${id}`);
    expect(foreign.status).toBe(404);
    expect(foreign.body).toEqual(lookup.body);
    expect(unknown.status).toBe(404);
    expect(unknown.body).toEqual(lookup.body);

    const mine = await owner.api.get(`/status/${id}`);
    expect(mine.body.status).toBe('payment_required');
    expect(mine.body.cancel_requested_at).toBeUndefined();
    expect((await service().anonymous.post(`/status/${id}/cancel`, undefined)).status).toBe(401);
  });
});

describe('cancel after signing', () => {
  it('is 409 not_cancellable on a confirmed request, saying when it was signed and its transaction; its history is in order', async () => {
    const { api } = await service().newKey();
    const r = await api.post('/execute', increment('too-late'));
    expect(r.status, JSON.stringify(r.body)).toBe(200);
    const done = await api.waitForTerminal(r.body.request_id);
    expect(done.status).toBe('confirmed');

    const late = await api.post(`/status/${done.request_id}/cancel`, undefined);
    expect(late.status).toBe(409);
    expect(late.body).toMatchObject({ error: 'not_cancellable', request_id: done.request_id, reason: 'finished', status: 'confirmed', tx_hash: done.tx_hash });
    expect(late.body.signed_at).toEqual(expect.any(String));
    expect(late.body.message).toContain(done.tx_hash);
    expect((await api.post(`/status/${done.request_id}/cancel`, undefined)).body).toEqual(late.body);

    const after = (await api.get(`/status/${done.request_id}`)).body;
    expect(after.status).toBe('confirmed');
    expect(after.history.map((h: { status: string }) => h.status)).toEqual(['pending', 'queued', 'broadcasting', 'confirmed']);
    const times = after.history.map((h: { at: string }) => Date.parse(h.at));
    expect(times).toEqual([...times].sort((a, b) => a - b));
    expect(after.history[0].at).toBe(after.created_at);
  });
});

describe('cancels racing the signing', () => {
  it('ends every request exactly one way: cancelled with no operation, or run with the cancel answered 409', async () => {
    const { api, apiKey } = await service().newKey();
    const client = service().devnet.publicClient('ethereum');
    const eth = service().devnet.chain('ethereum');
    const before = await client.readContract({ address: eth.testContracts.counter, abi: counterAbi, functionName: 'number' });
    const n = 16;
    const runs = await Promise.all(
      Array.from({ length: n }, async (_, i) => {
        const key = randomUUID();
        const id = requestIdForIdempotencyKey(apiKey, key)!;
        const [execute, cancel] = await Promise.all([
          api.post('/execute', increment(`racer-${i % 4}`), { 'idempotency-key': key }),
          cancelOnceItExists(api, id, i % 4), // a few ms apart, so both sides win some
        ]);
        return { id, execute, cancel };
      }),
    );

    let cancelledCount = 0;
    for (const { id, execute, cancel } of runs) {
      const final = await api.waitForTerminal(id);
      const stored = await service().store.get('ExecutionRequest', id);
      if (final.status === 'failed' && final.failure.code === 'cancelled') {
        cancelledCount++;
        expect(cancel.status, `${id}: ${JSON.stringify(cancel.body)}`).toBe(200);
        expect(stored.status?.userOperation, id).toBeUndefined();
        expect(final.tx_hash).toBeNull();
        expect(execute.status).toBe(409); // the execute that was waiting for its decision is told
      } else {
        expect(final.status, `${id}: ${JSON.stringify(final)}`).toBe('confirmed');
        expect(cancel.status, `${id}: ${JSON.stringify(cancel.body)}`).toBe(409);
        expect(cancel.body.error).toBe('not_cancellable');
        expect(stored.status?.userOperation).toBeDefined();
        expect(execute.status).toBe(200);
      }
    }
    const after = await client.readContract({ address: eth.testContracts.counter, abi: counterAbi, functionName: 'number' });
    // Each run request incremented once; no cancelled one did.
    expect(after - before).toBe(BigInt(n - cancelledCount));
    console.log(`race: ${cancelledCount} of ${n} cancelled, ${n - cancelledCount} ran`);
  });
});

/** POST /status/:id/cancel as soon as the request exists (404 until its execute created it), after `delayMs`. */
async function cancelOnceItExists(api: TestApi, id: string, delayMs: number) {
  await new Promise((r) => setTimeout(r, delayMs));
  for (;;) {
    const r = await api.post(`/status/${id}/cancel`, undefined);
    if (r.status !== 404) return r;
    await new Promise((res) => setTimeout(res, 2));
  }
}
