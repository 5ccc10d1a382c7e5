import { DEFAULT_NAMESPACE, type ApiClient, type ExecutionRequest, type ExecutionRequestSpec, type Failure } from '../../api/v1alpha1/index.ts';
import { watchOf, type Watch } from '../../runtime/index.ts';

/**
 * A request waiting for its payment follows its key (its ApiClient): revoked, the key can no longer attach a
 * payment (the gateway refuses it), so waiting is pointless and the request fails with `key_revoked`; given
 * another payment mode, the request takes the key's mode and is quoted again as a new request would be (sponsored
 * proceeds without payment). A request past payment is in flight and finishes as it is.
 */

/** The ExecutionRequest index of the requests waiting for a payment, by key (ApiClient name). */
export const AWAITING_PAYMENT_BY_KEY = 'awaitingPaymentByKey';
export const awaitingPaymentByKey = (r: ExecutionRequest): readonly string[] =>
  r.status?.phase === 'PaymentRequired' ? [r.spec.apiClient] : [];

/** The key's terms a waiting request takes over when they change. */
export type KeyTerms = Pick<ExecutionRequestSpec, 'paymentMode' | 'platformFeeUsd'>;

export type KeyChange =
  /** Nothing that concerns the request: wait for a payment as before. */
  | { kind: 'none' }
  /** Judge the payment attached first (it was sent while the key held), then look at the key again. */
  | { kind: 'judgeFirst' }
  | { kind: 'revoked'; failure: Failure }
  /** Take the key's terms (a spec write), then quote again. */
  | { kind: 'follow'; terms: KeyTerms }
  /** The spec follows the key already, but no quote under its terms was written yet (the step was cut short). */
  | { kind: 'requote' };

const NONE: KeyChange = { kind: 'none' };

/** What its key means for a request in PaymentRequired; `key` undefined: not in the cache (nothing to say). */
export function keyChangeFor(req: ExecutionRequest, key: ApiClient | undefined): KeyChange {
  const specMoved = (req.metadata.generation ?? 0) > (req.status?.observedGeneration ?? 0);
  const attached = req.spec.paymentProof !== undefined || req.spec.x402Payment !== undefined;
  // Only a payment attached, or following the key (which detaches any judged one), moves a waiting request's spec.
  if (specMoved && !attached) return { kind: 'requote' };
  if (!key) return NONE;
  const revoked = !key.spec.enabled;
  const otherMode = key.spec.paymentMode !== req.spec.paymentMode;
  if (!revoked && !otherMode) return NONE;
  if (specMoved) return { kind: 'judgeFirst' };
  if (revoked) {
    const when = key.status?.revokedAt ? ` at ${key.status.revokedAt}` : '';
    return {
      kind: 'revoked',
      failure: { code: 'key_revoked', message: `its API key was revoked${when} while it waited for a payment; nothing was executed` },
    };
  }
  return { kind: 'follow', terms: { paymentMode: key.spec.paymentMode, platformFeeUsd: key.spec.platformFeeUsd } };
}

/**
 * The execution controller's watch of ApiClients: a key revoked or given another payment mode re-queues its
 * requests waiting for a payment now, rather than when their quote's timer fires (minutes later).
 */
export const apiClientWatch: Watch = watchOf({
  kind: 'ApiClient',
  map(change, cache) {
    if (change.type !== 'updated') return [];
    const { old, obj } = change;
    if (old.spec.enabled === obj.spec.enabled && old.spec.paymentMode === obj.spec.paymentMode) return [];
    return cache
      .informerFor('ExecutionRequest')
      .byIndex(AWAITING_PAYMENT_BY_KEY, obj.metadata.name)
      .map((r) => ({ namespace: r.metadata.namespace ?? DEFAULT_NAMESPACE, name: r.metadata.name }));
  },
});
