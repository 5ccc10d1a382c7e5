import { CANCELLED_FAILURE, type ExecutionRequest } from '../../../api/v1alpha1/index.ts';
import type { ReconcileResult } from '../../../runtime/index.ts';
import type { Reconciling } from '../context.ts';
import { fail } from '../status.ts';

/** Whether the caller asked to cancel and nothing is signed yet: the controller ends it before anything else. */
export const cancelPending = (req: ExecutionRequest): boolean =>
  req.spec.cancelRequestedTime !== undefined && req.status?.userOperation === undefined;

/**
 * Ends a request its caller cancelled (spec.cancelRequestedTime, set by POST /status/:id/cancel) as Failed with
 * code `cancelled`, before it is signed. Who wins, the cancel or the signing, is decided here, by the controller
 * alone, in the order of its writes to one object:
 *   - a cancel in the cache when a reconcile takes the request up ends it here, before anything is signed;
 *   - one stored after comes too late: sign (phases/sign.ts) writes under the resourceVersion it acted on, the
 *     write conflicts, and seeing that only a cancel changed it writes the signed operation anyway (a nonce was
 *     spent); the request goes on and the gateway answers 409.
 * The write below re-checks the status it replaces: a request found signed meanwhile is left as it is, so a
 * cancelled request never holds a signed operation. A payment taken (a proof's, x402's, a credit's) stays the
 * caller's as a credit (fail → payments/credit.ts); its receipt keeps the transfer from paying twice.
 */
export function cancelUnsigned(r: Reconciling, req: ExecutionRequest): Promise<ReconcileResult> {
  const asked = req.spec.cancelRequestedTime!;
  const paid = req.status?.payment?.paid;
  const payment = paid && paid.method !== 'auto' ? '; its payment was not spent and stays yours as a credit for the next request of this agent (credit)' : '';
  return fail(
    r,
    req,
    { code: CANCELLED_FAILURE, message: `cancelled by its caller at ${asked}, before its operation was signed: nothing was sent to the chain${payment}` },
    { Submitted: ['False', 'Cancelled', `cancel asked at ${asked}`] },
    {},
    { unlessSigned: true },
  );
}
