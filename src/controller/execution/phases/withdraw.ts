import type { ExecutionRequest, Failure } from '../../../api/v1alpha1/index.ts';
import type { ChainWorker } from '../../../chain/types.ts';
import type { ReconcileResult } from '../../../runtime/index.ts';
import { suspensionOf } from '../admission/policy.ts';
import type { Reconciling } from '../context.ts';
import { CACHE_CATCH_UP_MS, conditions, fail, write } from '../status.ts';

/**
 * The kill switch for a request already signed: its operation is taken back from the worker's bundler when no
 * bundle transaction has carried it (ChainWorker.withdrawOperation), and the request fails with `agent_suspended`;
 * one already carried (or on chain) finishes as it is, and PolicyAllowed says so.
 *
 * Order, so that a crash anywhere neither sends a withdrawn operation nor loses one that was not withdrawn:
 *   1. the decision is written (PolicyAllowed False/Withdrawing, naming the policy): from here the request is
 *      withdrawn even if the switch is turned off again, and no phase submits its operation again;
 *   2. the worker withdraws it (idempotent: asked again, it answers withdrawn; a restarted worker that does not hold
 *      it withdraws it anew unless the chain has used its nonce);
 *   3. the request fails (agent_suspended, failure.policy); from then on it is not in flight, so no restore
 *      reserves its nonce or sends it again.
 * A crash after 1 or 2 repeats 2 and 3 (restoreInFlight reserved the nonce meanwhile: withdrawing frees it again).
 */

/** PolicyAllowed reasons of a signed request under the kill switch. */
export const WITHDRAWING = 'Withdrawing';
export const SENT_BEFORE_SUSPENSION = 'SentBeforeSuspension';

interface Suspension {
  policy: string;
  message: string;
  /** Step 1 is written already. */
  decided: boolean;
}

const policyAllowed = (req: ExecutionRequest) => req.status?.conditions?.find((c) => c.type === 'PolicyAllowed');
/** The decision's record in PolicyAllowed's message: `policy <name>: <why>`. */
const MARK = /^policy (\S+): (.*)$/s;

/**
 * The suspension a signed request must be withdrawn for, if any: one decided before (step 1 written), or the kill
 * switch as the controller's cache has it now. Undefined for an unsigned request, one whose inclusion is recorded
 * (on chain: it finishes), or one found sent before.
 */
export function signedSuspension(r: Reconciling, req: ExecutionRequest): Suspension | undefined {
  const s = req.status;
  if (!s?.userOperation || (s.phase !== 'Queued' && s.phase !== 'Broadcasting') || s.txHash !== undefined) return undefined;
  const cond = policyAllowed(req);
  if (cond?.reason === SENT_BEFORE_SUSPENSION) return undefined;
  if (cond?.reason === WITHDRAWING) {
    const m = MARK.exec(cond.message ?? '');
    if (m) return { policy: m[1]!, message: m[2]!, decided: true };
  }
  const d = suspensionOf(r, req);
  return d ? { policy: d.policy, message: d.message, decided: false } : undefined;
}

/** Steps 1 to 3 above for `req` (signedSuspension answered `sus`). */
export async function withdrawSigned(r: Reconciling, req: ExecutionRequest, worker: ChainWorker, sus: Suspension): Promise<ReconcileResult> {
  const op = req.status!.userOperation!;
  if (!sus.decided) {
    const written: ReconcileResult = { done: true };
    const t = r.now();
    const result = await write(r, req, (s) => ({
      ...s,
      conditions: conditions(s, t, { PolicyAllowed: ['False', WITHDRAWING, `policy ${sus.policy}: ${sus.message}`] }),
    }), written);
    if (result !== written) return result; // the request moved on meanwhile: decide again on the fresh copy
  }
  const answer = await worker.withdrawOperation(op);
  if (answer.state === 'sent') {
    const t = r.now();
    return write(
      r,
      req,
      (s) => ({
        ...s,
        conditions: conditions(s, t, {
          PolicyAllowed: ['False', SENT_BEFORE_SUSPENSION, `${sus.message}; its operation was already in a bundle transaction when the switch was seen: it finishes as it is`],
        }),
      }),
      { requeueAfterMs: CACHE_CATCH_UP_MS },
    );
  }
  r.deps.takePushedOutcome(op.hash); // its dropped/withdrawn push, if one came: nothing left to track
  const failure: Failure = {
    code: 'agent_suspended',
    message: `${sus.message}; its signed operation was withdrawn from the bundler before any bundle transaction carried it: nothing was executed`,
    policy: { name: sus.policy },
  };
  // Not executed: an auto fee rode in the operation and is not charged (its claim stays, naming an operation the
  // service will not send; the request no longer holds the wallet's balance for it); a payment by transfer stays
  // the caller's as a credit (fail()).
  const charged = req.status?.payment?.paid?.method === 'auto' ? { costUsd: 0 } : {};
  // The write may meet step 1's own write (a Conflict): it re-reads and applies while the phase has not moved.
  return fail(r, req, failure, { PolicyAllowed: ['False', 'AgentSuspended', sus.message] }, charged);
}
