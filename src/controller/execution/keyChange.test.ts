import { describe, expect, it } from 'vitest';
import type { ApiClient, ExecutionRequest } from '../../api/v1alpha1/index.ts';
import { apiClient, executionRequest } from '../../store/embedded/testing/fixtures.ts';
import { awaitingPaymentByKey, keyChangeFor } from './keyChange.ts';

/** A manual-mode request of client-a waiting for its payment, at generation `generation`, observed at `observed`. */
function waiting(opts: { generation?: number; observed?: number; proof?: boolean } = {}): ExecutionRequest {
  const r = executionRequest('req-1');
  return {
    ...r,
    metadata: { ...r.metadata, generation: opts.generation ?? 1 },
    spec: {
      ...r.spec,
      paymentMode: 'manual',
      ...(opts.proof && { paymentProof: { payer: `0x${'22'.repeat(20)}`, token: 'USDC', chain: 'base', txHash: `0x${'33'.repeat(32)}` } }),
    },
    status: { phase: 'PaymentRequired', observedGeneration: opts.observed ?? 1 },
  };
}
const key = (spec: Partial<ApiClient['spec']>, revokedAt?: string): ApiClient => {
  const c = apiClient('client-a');
  return { ...c, spec: { ...c.spec, paymentMode: 'manual', ...spec }, ...(revokedAt && { status: { revokedAt } }) };
};

describe('what its key means for a request waiting for a payment', () => {
  it('nothing while the key is as it was, or not in the cache', () => {
    expect(keyChangeFor(waiting(), key({}))).toEqual({ kind: 'none' });
    expect(keyChangeFor(waiting(), undefined)).toEqual({ kind: 'none' });
  });

  it('a revoked key fails it with key_revoked, saying when', () => {
    const change = keyChangeFor(waiting(), key({ enabled: false }, '2026-11-25T20:00:00.000Z'));
    expect(change).toMatchObject({ kind: 'revoked', failure: { code: 'key_revoked' } });
    expect(change.kind === 'revoked' && change.failure.message).toMatch(/revoked at 2026-11-25T20:00:00.000Z/);
  });

  it('another mode: the request takes the key’s terms (its platform fee too)', () => {
    expect(keyChangeFor(waiting(), key({ paymentMode: 'sponsored' }))).toEqual({ kind: 'follow', terms: { paymentMode: 'sponsored', platformFeeUsd: undefined } });
    expect(keyChangeFor(waiting(), key({ paymentMode: 'auto', platformFeeUsd: 0.5 }))).toEqual({ kind: 'follow', terms: { paymentMode: 'auto', platformFeeUsd: 0.5 } });
  });

  it('a payment attached and not yet judged is judged first, whatever the key became', () => {
    const paid = waiting({ generation: 2, observed: 1, proof: true });
    expect(keyChangeFor(paid, key({ enabled: false }))).toEqual({ kind: 'judgeFirst' });
    expect(keyChangeFor(paid, key({ paymentMode: 'sponsored' }))).toEqual({ kind: 'judgeFirst' });
    expect(keyChangeFor(paid, key({}))).toEqual({ kind: 'none' });
  });

  it('a spec moved with no payment attached (it followed its key, not yet quoted): quote again', () => {
    expect(keyChangeFor(waiting({ generation: 2, observed: 1 }), key({ paymentMode: 'sponsored' }))).toEqual({ kind: 'requote' });
    expect(keyChangeFor(waiting({ generation: 2, observed: 1 }), undefined)).toEqual({ kind: 'requote' });
  });

  it('indexes only the requests waiting for a payment, by key', () => {
    expect(awaitingPaymentByKey(waiting())).toEqual(['client-a']);
    expect(awaitingPaymentByKey({ ...waiting(), status: { phase: 'Queued' } })).toEqual([]);
    expect(awaitingPaymentByKey(executionRequest('new'))).toEqual([]);
  });
});
