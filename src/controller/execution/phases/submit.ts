import type { ExecutionRequest, ExecutionRequestStatus, SignedUserOperation } from '../../../api/v1alpha1/index.ts';
import type { ChainWorker } from '../../../chain/types.ts';
import type { ReconcileResult } from '../../../runtime/index.ts';
import type { Reconciling } from '../context.ts';
import { conditions, write } from '../status.ts';
import { admitAndSign } from './admit.ts';
import { isFinal, settle } from './track.ts';

/**
 * Hand the persisted operation to the bundler; a retry re-sends the very same operation.
 *
 * The Broadcasting status is written only when the operation's outcome takes longer than `broadcastingAfterMs`:
 * one final by then (a fast chain, a devnet) goes from Queued to its terminal phase in one write, whose history
 * records the Broadcasting it went through and when. That saves a status write per request (a durable write
 * embedded, an API-server request in a cluster) without hiding the state where it lasts. Nothing about safety
 * moves: the operation was durable before it was sent, and a crash before the next write only sends the same
 * operation again (the EntryPoint nonce admits it once).
 */
export async function submit(r: Reconciling, req: ExecutionRequest, worker: ChainWorker): Promise<ReconcileResult> {
  const op = req.status?.userOperation;
  if (!op) return admitAndSign(r, req, worker); // queued by a payment step but not signed yet
  const sentAt = r.handedOn.get(op.hash);
  if (sentAt === undefined) return handOn(r, op, worker);
  const broadcast = (s: ExecutionRequestStatus, at: Date): ExecutionRequestStatus => ({
    ...s,
    submitAttempts: (s.submitAttempts ?? 0) + 1,
    conditions: conditions(s, at, {
      Submitted: ['True', 'BundlerAccepted', ''],
      Succeeded: ['Unknown', 'Broadcasting', ''],
    }),
  });
  const outcome = r.deps.takePushedOutcome(op.hash);
  if (isFinal(outcome)) {
    r.handedOn.delete(op.hash);
    const at = new Date(sentAt);
    // The history entry Broadcasting would have had, before the terminal one the write appends.
    return settle(r, req, outcome, r.now(), (s) => ({ ...broadcast(s, at), history: [...(s.history ?? []), { phase: 'Broadcasting', time: at.toISOString() }] }));
  }
  // Looked at early (its own Queued write's event, a policy change): Broadcasting only once the wait is over.
  const left = sentAt + r.broadcastingAfterMs - r.now().getTime();
  if (left > 0 && outcome === undefined) return { requeueAfterMs: left };
  // Not final by then, or an outcome that is not (dropped, included short of its depth): Broadcasting, and track()
  // takes it from there, asking the worker.
  r.handedOn.delete(op.hash);
  return write(r, req, (s) => ({ ...broadcast(s, r.now()), phase: 'Broadcasting' }));
}

/**
 * Hands a signed operation, durable in status, to the bundler, and looks again once `broadcastingAfterMs` has
 * passed (its pushed outcome enqueues the request sooner). Called by sign right after the Queued write, so the
 * operation is not held back by that write's round trip through the watch.
 */
export async function handOn(r: Reconciling, op: SignedUserOperation, worker: ChainWorker): Promise<ReconcileResult> {
  await worker.submitOperation(op);
  r.handedOn.set(op.hash, r.now().getTime());
  return { requeueAfterMs: r.broadcastingAfterMs };
}
