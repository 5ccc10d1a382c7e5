import {
  MAX_INCLUSION_CHANGES,
  type ExecutionRequest,
  type ExecutionRequestStatus,
  type Failure,
  type InclusionChange,
} from '../../api/v1alpha1/index.ts';
import type { ChainWorker, OperationOutcome } from '../../chain/types.ts';
import type { PaymentPolicy } from '../../payments/types.ts';

type Included = Extract<OperationOutcome, { state: 'included' }>;

/**
 * What became of a finished (Confirmed or Reverted) request's inclusion, looked at again because its transaction
 * was not found in the block its status names (inclusionAudit.ts):
 *   intact  it is there after all (a node that answered late): nothing changes
 *   moved   the same operation is included elsewhere, deep enough, with the same result (the chain re-mined the
 *           same transaction, or another bundle): the status follows it and stays; no event
 *   reopen  gone, and it can still be included (its nonce is unused, its sponsorship unexpired), or it already is
 *           again, not yet deep enough, or with another result: back to Broadcasting, where `track` sends the same
 *           signed operation again and confirms it at depth, as before its first confirmation
 *   fail    gone for good: its nonce was used by another operation, or its sponsorship expired (inclusion_lost);
 *           or its payment's own transaction is gone (payment_lost: it is not sent again for free)
 *   wait    its block is not visible (yet), or its payment's transaction is back on chain but not deep enough
 *           yet: look again in a moment
 */
export type InclusionVerdict =
  | { kind: 'intact' }
  | { kind: 'moved'; outcome: Included; paymentLost?: string }
  | { kind: 'reopen'; outcome?: Included; why: string }
  | { kind: 'fail'; failure: Failure }
  | { kind: 'wait'; ms: number; why: string };

const PAYMENT_RECHECK_MS = 2_000;
const NOT_VISIBLE_RECHECK_MS = 2_000;
const sameHash = (a: string | undefined, b: string | undefined): boolean => a !== undefined && b !== undefined && a.toLowerCase() === b.toLowerCase();
const where = (s: ExecutionRequestStatus): string => `block ${s.blockNumber} (transaction ${s.txHash})`;

/**
 * Payments made by a transaction of their own (a proof's transfer, an x402 settlement, or the one behind a credit):
 * those can be lost apart from the operation.
 */
const paidByTransaction = (req: ExecutionRequest): boolean => {
  const m = req.status?.payment?.paid?.method;
  return m === 'proof' || m === 'x402' || m === 'credit';
};

/**
 * Decides what a finished request's inclusion has become. The chain worker's outcome is the authority (the
 * bundler's memory, then the chain: the UserOperationEvent, else the wallet's EntryPoint nonce); the payment's
 * own transaction is checked again before anything would be sent again.
 */
export async function judgeInclusion(req: ExecutionRequest, worker: ChainWorker, payment: PaymentPolicy): Promise<InclusionVerdict> {
  const s = req.status!;
  const op = s.userOperation!;
  const outcome = await worker.getOperationOutcome(op);
  if (outcome.state === 'included' && sameHash(outcome.blockHash, s.blockHash)) {
    // Where it was; 0 confirmations: the worker cannot see its block yet (a node answering late, or a chain that
    // rewound a moment ago, which it tells apart after a while): look again.
    return outcome.confirmations > 0 ? { kind: 'intact' } : { kind: 'wait', ms: NOT_VISIBLE_RECHECK_MS, why: `block ${s.blockNumber} is not visible on chain` };
  }

  const paymentLost = async (): Promise<{ lost?: string; notFinal?: string }> => {
    if (!paidByTransaction(req)) return {};
    const r = await payment.recheck({ request: req, worker }, s.payment!.paid!);
    return r.kind === 'lost' ? { lost: r.message } : r.kind === 'not_final' ? { notFinal: r.message } : {};
  };

  if (outcome.state === 'included') {
    const deep = outcome.confirmations >= outcome.requiredConfirmations;
    if (deep && outcome.success === (s.phase === 'Confirmed')) {
      // Executed, where the chain says: the status follows it. A payment lost meanwhile cannot undo that: said.
      const { lost } = await paymentLost();
      return { kind: 'moved', outcome, ...(lost !== undefined && { paymentLost: lost }) };
    }
    return { kind: 'reopen', outcome, why: deep ? 'included again with another result' : 'included again, not yet at the confirmation depth' };
  }
  if (outcome.state === 'dropped') {
    return {
      kind: 'fail',
      failure: {
        code: 'inclusion_lost',
        message: `its inclusion in ${where(s)} is no longer on chain, and its operation can no longer be included (${outcome.code}: ${outcome.message}); it was not executed`,
      },
    };
  }
  // `unknown` (nothing used its nonce: it would be sent again) or `pending` (held to be sent): not for free.
  const { lost, notFinal } = await paymentLost();
  if (lost !== undefined) {
    return {
      kind: 'fail',
      failure: { code: 'payment_lost', message: `its inclusion in ${where(s)} is no longer on chain, nor is its payment: ${lost}; it was not executed and is not sent again; send the request again` },
    };
  }
  if (notFinal !== undefined) return { kind: 'wait', ms: PAYMENT_RECHECK_MS, why: notFinal };
  return { kind: 'reopen', why: `its inclusion in ${where(s)} is no longer on chain; its signed operation is sent again` };
}

/** The change recorded on the status, newest last, at most MAX_INCLUSION_CHANGES kept. */
export function recordChange(s: ExecutionRequestStatus, change: Omit<InclusionChange, 'txHash' | 'blockNumber' | 'blockHash' | 'phase'>): InclusionChange[] {
  const entry: InclusionChange = {
    ...change,
    txHash: s.txHash!,
    blockNumber: s.blockNumber ?? '',
    ...(s.blockHash !== undefined && { blockHash: s.blockHash }),
    phase: s.phase!,
  };
  return [...(s.inclusionChanges ?? []), entry].slice(-MAX_INCLUSION_CHANGES);
}
