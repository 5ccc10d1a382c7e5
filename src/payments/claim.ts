import { API_VERSION, type PaymentReceipt } from '../api/v1alpha1/index.ts';
import { isStoreError, type ResourceStore } from '../store/types.ts';

export type ClaimResult = { claimed: true } | { claimed: false; usedBy: string };

/**
 * Makes a payment single-use: creates its PaymentReceipt if absent. The name says which payment (a chain and
 * tx hash, or an x402 authorization), so of two requests racing for one payment exactly one create succeeds,
 * whatever the process or replica. A receipt that exists for the same request counts as claimed (a retry after
 * a crash between the claim and the status write); one for another request, by any key, does not.
 */
export async function claimPayment(
  store: ResourceStore,
  namespace: string,
  name: string,
  spec: PaymentReceipt['spec'],
): Promise<ClaimResult> {
  const receipt: PaymentReceipt = { apiVersion: API_VERSION, kind: 'PaymentReceipt', metadata: { name, namespace }, spec };
  try {
    await store.create(receipt);
    return { claimed: true };
  } catch (e) {
    if (!isStoreError(e, 'AlreadyExists')) throw e;
  }
  const existing = await store.get('PaymentReceipt', name, namespace);
  if (existing.spec.requestId === spec.requestId && existing.spec.apiClient === spec.apiClient) return { claimed: true };
  return { claimed: false, usedBy: existing.spec.requestId };
}
