import { isAddressEqual, parseAbiItem, toEventSelector, type Address, type Hex } from 'viem';
import { API_VERSION, operationClaimName, type ExecutionRequest, type PaymentReceipt, type SignedUserOperation } from '../api/v1alpha1/index.ts';
import type { TransactionReceiptInfo } from '../chain/types.ts';
import type { ChainName } from '../config/chains.ts';
import { isStoreError, type ResourceStore } from '../store/types.ts';

/** `created`: this call wrote the claim (rather than finding the same request's from an earlier try). */
export type ClaimResult = { claimed: true; created: boolean } | { claimed: false; usedBy: string };

/**
 * Makes a payment single-use: creates its PaymentReceipt if absent. The name says what the payment spends (a
 * transfer, a transaction, an operation's fee, an x402 authorization: see paymentReceipt.ts), so of two requests
 * racing for one payment exactly one create succeeds, whatever the process or replica. A receipt that exists for
 * the same request counts as claimed (a retry after a crash between the claim and the status write); one for
 * another request, by any key, does not.
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
    return { claimed: true, created: true };
  } catch (e) {
    if (!isStoreError(e, 'AlreadyExists')) throw e;
  }
  const existing = await store.get('PaymentReceipt', name, namespace);
  const sameRequest =
    existing.spec.requestId === spec.requestId &&
    existing.spec.apiClient === spec.apiClient &&
    // A receipt written before receipts named the uid can only be that request's own retry.
    (existing.spec.requestUid === undefined || existing.spec.requestUid === spec.requestUid);
  if (sameRequest) return { claimed: true, created: false };
  return { claimed: false, usedBy: existing.spec.requestId };
}

/**
 * Claims several names as one payment (each Transfer log a payment counts): all, or none. When one is another
 * request's, the ones this call wrote are removed again, so a refused payment leaves no claim behind.
 */
export async function claimAll(
  store: ResourceStore,
  namespace: string,
  claims: readonly { name: string; spec: PaymentReceipt['spec'] }[],
): Promise<ClaimResult> {
  const written: string[] = [];
  for (const c of claims) {
    const r = await claimPayment(store, namespace, c.name, c.spec);
    if (r.claimed) {
      if (r.created) written.push(c.name);
      continue;
    }
    for (const name of written) await store.delete('PaymentReceipt', name, { namespace }).catch(() => undefined);
    return r;
  }
  return { claimed: true, created: written.length > 0 };
}

/** The claim of that name, or undefined when nothing claimed it. */
export async function claimOf(store: ResourceStore, namespace: string, name: string): Promise<PaymentReceipt | undefined> {
  try {
    return await store.get('PaymentReceipt', name, namespace);
  } catch (e) {
    if (isStoreError(e, 'NotFound')) return undefined;
    throw e;
  }
}

/**
 * Claims the fee an auto-mode operation carries, once the operation is signed and before it is sent: whoever sends
 * the bundle (this service's executors, or an outside bundler), a proof presenting the bundle's fee transfer finds
 * the claim (claimedOperationOf) and is refused.
 */
export async function claimOperationFee(
  store: ResourceStore,
  namespace: string,
  request: ExecutionRequest,
  op: Pick<SignedUserOperation, 'hash'>,
  fee: { token: string; amountRaw: string; payer: string },
): Promise<string> {
  const name = operationClaimName(request.spec.chain, op.hash);
  const claim = await claimPayment(store, namespace, name, {
    chain: request.spec.chain,
    method: 'auto',
    userOpHash: op.hash,
    token: fee.token,
    payer: fee.payer,
    amountRaw: fee.amountRaw,
    apiClient: request.spec.apiClient,
    requestId: request.metadata.name,
    requestUid: request.metadata.uid,
  });
  // An operation hash covers its sender, nonce and chain: no other request can have signed the same one.
  if (!claim.claimed) throw new Error(`operation ${op.hash} is claimed by request ${claim.usedBy}`);
  return name;
}

const USER_OPERATION_EVENT = toEventSelector(
  parseAbiItem('event UserOperationEvent(bytes32 indexed userOpHash, address indexed sender, address indexed paymaster, uint256 nonce, bool success, uint256 actualGasCost, uint256 actualGasUsed)'),
);

/**
 * The ERC-4337 operation whose execution emitted the logs at `positions` of a bundle transaction, and the name of
 * its fee claim; undefined when they are not inside an operation of `entryPoint`. The EntryPoint (v0.6 to v0.8)
 * emits an operation's UserOperationEvent right after the logs of its execution, so the operation of a log is the
 * first UserOperationEvent after it.
 */
export function claimedOperationOf(
  chain: ChainName,
  receipt: TransactionReceiptInfo,
  entryPoint: Address,
  positions: readonly number[],
): { userOpHash: Hex; claim: string } | undefined {
  const first = Math.min(...positions);
  for (let i = first + 1; i < receipt.logs.length; i++) {
    const log = receipt.logs[i]!;
    if (log.topics[0] === USER_OPERATION_EVENT && isAddressEqual(log.address, entryPoint) && log.topics[1] !== undefined) {
      const userOpHash = log.topics[1];
      return { userOpHash, claim: operationClaimName(chain, userOpHash) };
    }
  }
  return undefined;
}
