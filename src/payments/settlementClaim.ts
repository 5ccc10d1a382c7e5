import { transactionClaimName } from '../api/v1alpha1/index.ts';
import type { ResourceStore } from '../store/types.ts';
import { claimOf, claimPayment } from './claim.ts';
import { authorizationClaimName, type SignedSettlement } from './x402/index.ts';

/**
 * The x402 facilitator's `beforeSend`: claims a settlement transaction, once signed and before it is sent, for the
 * request that claimed the authorization it spends. A proof presenting the settlement then finds the transaction
 * taken. A settlement of an authorization nobody claimed is never sent.
 */
export function claimSettlement(store: ResourceStore, namespace: string): (tx: SignedSettlement) => Promise<void> {
  return async (tx) => {
    const authorization = await claimOf(store, namespace, authorizationClaimName({ chainId: tx.chainId, asset: tx.asset, from: tx.from, nonce: tx.nonce }));
    if (!authorization) throw new Error(`x402: no request claimed the authorization ${tx.nonce} of ${tx.from}: its settlement is not sent`);
    const name = transactionClaimName(authorization.spec.chain, tx.hash);
    const claim = await claimPayment(store, namespace, name, { ...authorization.spec, txHash: tx.hash });
    // A fresh signature's hash: taken only by a retry of this very settlement.
    if (!claim.claimed) throw new Error(`x402: settlement ${tx.hash} is claimed by request ${claim.usedBy}`);
  };
}
