import type { ExecutionRequest } from '../../api/v1alpha1/index.ts';
import { isTerminal } from '../../api/v1alpha1/index.ts';
import { isChainError } from '../../chain/errors.ts';
import type { ReconcileResult } from '../../runtime/index.ts';
import { isStoreError } from '../../store/types.ts';
import { DEFAULT_ADMISSION } from './admission/steps.ts';
import type { ExecutionReconcilerDeps, InternalErrorStep, Reconciling } from './context.ts';
import { admitAndSign } from './phases/admit.ts';
import { cancelPending, cancelUnsigned } from './phases/cancel.ts';
import { waitForPayment } from './phases/awaitPayment.ts';
import { recheckInclusion } from './phases/recheckInclusion.ts';
import { signPaid } from './phases/sign.ts';
import { submit } from './phases/submit.ts';
import { track } from './phases/track.ts';
import { signedSuspension, withdrawSigned } from './phases/withdraw.ts';
import { fail } from './status.ts';
import { failByPolicy, suspensionOf } from './admission/policy.ts';

/** Not signed yet: no operation in its status, so nothing of it can reach a chain. */
const isUnsigned = (req: ExecutionRequest): boolean => req.status?.userOperation === undefined;

export type { ExecutionReconcilerDeps, InternalErrorStep } from './context.ts';

/** Pace of retries while a chain or its worker does not answer. */
const UNAVAILABLE_RETRY_MS = 1_000;
const retryWhenUnavailable = (e: unknown): ReconcileResult => {
  if (isChainError(e, 'rpc_unavailable')) return { requeueAfterMs: UNAVAILABLE_RETRY_MS };
  throw e;
};
/** Errors worth retrying: the store or a chain did not answer. Anything else is a defect, not a condition. */
const isTransient = (e: unknown): boolean => isChainError(e, 'rpc_unavailable') || isStoreError(e);

/**
 * The execution reconciler: reads one ExecutionRequest, takes the one next step of spec §3 and writes status.
 *   (new/Pending) ─admission steps, sign─▶ Queued(op) ─submit─▶ Broadcasting ─outcome, at depth─▶ Confirmed|Reverted|Failed
 * This file dispatches by phase; each phase is a module of phases/ (admit, awaitPayment, sign, submit, track,
 * recheckInclusion), admission is the ordered list of admission/steps.ts, and every status write goes through
 * status.ts.
 *
 * It reads the informer's cache, not the store: every write carries the resourceVersion it read, so a stale
 * cache can only cost a Conflict and a re-read, never a wrong write. Signing too: a conflicting write leaves the
 * signed operation with the worker, which hands the same one back when the request is signed again.
 *
 * The signed operation is written to status before it is sent: a retry after a crash re-sends that same
 * operation, and the EntryPoint nonce makes a second execution impossible. An inclusion becomes `Confirmed`
 * only at the chain's confirmation depth; until then each look re-checks it, and one a reorg removed sends the
 * same operation again (or fails with nonce_used when another operation took its nonce). A terminal request is
 * left alone, except when its inclusion was found gone afterwards (a suspect): it may then move back to
 * Broadcasting (sent again), follow its inclusion to another block, or fail with inclusion_lost or payment_lost.
 */
export function createExecutionReconciler(deps: ExecutionReconcilerDeps) {
  const now = deps.now ?? (() => new Date());
  const r: Reconciling = {
    deps,
    now,
    pollMs: deps.outcomePollMs ?? 15_000,
    broadcastingAfterMs: deps.broadcastingAfterMs ?? 1_000,
    handedOn: new Map(),
    inclusionPollMs: deps.inclusionPollMs ?? 2_000,
    paymentGraceMs: deps.paymentGraceMs ?? 60_000,
    admissionRetryMs: deps.admissionRetryMs ?? 10_000,
    admissionTimeoutMs: deps.admissionTimeoutMs ?? 120_000,
    admission: deps.admission ?? DEFAULT_ADMISSION,
    paymentContext: (request, worker, t) => ({
      request,
      worker,
      now: t,
      amounts: deps.amounts,
      feesInFlight: deps.autoFeesInFlight?.(request),
      credits: deps.creditsFor?.(request),
    }),
  };
  const { admissionRetryMs, admissionTimeoutMs } = r;

  /**
   * An unexpected error while admitting a request or judging its payment (a defect, or input no check foresaw)
   * fails the request with `internal_error` and is counted, rather than retried forever: a retry meets the same
   * error, and the request would never leave `pending` (nor its quote ever expire, being made again each time).
   * Nothing was signed, so failing moves no money.
   */
  function failInternally(req: ExecutionRequest, step: InternalErrorStep, e: unknown): Promise<ReconcileResult> {
    if (isTransient(e)) throw e;
    deps.onInternalError?.(step);
    const detail = e instanceof Error ? e.message : String(e);
    return fail(r, req, {
      code: 'internal_error',
      message: `the request failed on an internal error while ${step === 'admission' ? 'being admitted' : 'its payment was verified'}; nothing was executed (${detail.split('\n')[0]!.slice(0, 200)})`,
    });
  }

  async function reconcile(namespace: string, name: string): Promise<ReconcileResult> {
    const req = deps.cached(namespace, name);
    if (!req) return { done: true };
    const phase = req.status?.phase;
    // Handed on from Queued and moved on by another path (the kill switch, a restart's look): nothing to remember.
    if (phase !== 'Queued' && req.status?.userOperation) r.handedOn.delete(req.status.userOperation.hash);
    if (isTerminal(phase)) {
      const suspect = deps.inclusionSuspects?.has(namespace, name) === true;
      const worker = deps.workers.get(req.spec.chain);
      if (!suspect || !worker) return { done: true };
      return recheckInclusion(r, req, worker).catch(retryWhenUnavailable);
    }
    // Cancelled by its caller before anything was signed: ended first, whatever phase it waits in (phases/cancel.ts).
    if (cancelPending(req)) return cancelUnsigned(r, req);
    // The kill switch: an unsigned request of a suspended agent fails now (a payment taken stays a credit).
    const suspended = isUnsigned(req) ? suspensionOf(r, req) : undefined;
    if (suspended) return failByPolicy(r, req, suspended);
    const worker = deps.workers.get(req.spec.chain);
    if (!worker) return fail(r, req, { code: 'chain_unavailable', message: `no chain worker serves '${req.spec.chain}'` });
    // The kill switch for a signed request not seen included: withdrawn from the bundler unless a bundle carried it.
    const withdrawal = signedSuspension(r, req);
    if (withdrawal) return withdrawSigned(r, req, worker, withdrawal).catch(retryWhenUnavailable);

    switch (phase) {
      case undefined:
      case 'Pending': {
        const ageOf = () => now().getTime() - Date.parse(req.metadata.creationTimestamp ?? now().toISOString());
        if (ageOf() >= admissionTimeoutMs) {
          return fail(r, req, {
            code: 'admission_timeout',
            message: `the request was not admitted within ${Math.round(admissionTimeoutMs / 1000)} s of its acceptance; nothing was executed; send it again`,
          });
        }
        return admitAndSign(r, req, worker).catch((e: unknown) => {
          // A chain (or its worker) that does not answer: tried again every second, until admissionRetryMs
          // after acceptance. A fixed pace, not the queue's error backoff: failures come fast (connection
          // refused), and an exponential delay would grow past the deadline after a few of them.
          if (!isChainError(e, 'rpc_unavailable')) return failInternally(req, 'admission', e);
          const age = ageOf();
          if (age < admissionRetryMs) return { requeueAfterMs: Math.min(UNAVAILABLE_RETRY_MS, admissionRetryMs - age) };
          return fail(
            r,
            req,
            { code: 'chain_unavailable', message: `${req.spec.chain} did not answer for ${Math.round(age / 1000)} s: ${e.shortMessage}` },
            { Simulated: ['Unknown', 'ChainUnavailable', e.shortMessage] },
          );
        });
      }
      // Waiting for a payment: act when one is attached (a spec change), or when its key changed (keyChange.ts);
      // the chain's absence only delays that.
      case 'PaymentRequired':
        return waitForPayment(r, namespace, req, worker).catch((e: unknown) =>
          isChainError(e, 'rpc_unavailable') ? retryWhenUnavailable(e) : failInternally(req, 'payment', e),
        );
      // Paid: sign and queue. Never given up for an unreachable chain: the money has moved.
      case 'PaymentVerified':
        return signPaid(r, req, worker).catch(retryWhenUnavailable);
      // Signed and persisted: nothing to give up on while the worker is away; look again every second.
      case 'Queued':
        return submit(r, req, worker).catch(retryWhenUnavailable);
      case 'Broadcasting':
        return track(r, req, worker).catch(retryWhenUnavailable);
      default:
        return { done: true };
    }
  }

  return { reconcile };
}
