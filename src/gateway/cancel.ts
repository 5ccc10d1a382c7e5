import { CANCELLED_FAILURE, isTerminal, type ApiClient, type ExecutionRequest } from '../api/v1alpha1/index.ts';
import { statusOf } from '../api/http/presentStatus.ts';
import type { NotCancellable } from '../api/http/index.ts';
import { isStoreError } from '../store/types.ts';
import type { GatewayContext } from './context.ts';
import { GatewayError } from './errors.ts';
import type { ExecutionInformer } from './executionInformer.ts';
import { ownRequest } from './ownRequest.ts';

export type CancelOutcome =
  /** Ended `failed` with code `cancelled`: nothing was signed or sent (200). */
  | { kind: 'cancelled'; request: ExecutionRequest }
  /** The cancel is stored but the controller has not acted on it within the wait (202): it will, before any signing. */
  | { kind: 'requested'; request: ExecutionRequest }
  /** Too late: signed, or finished first (409). */
  | { kind: 'not_cancellable'; body: NotCancellable };

/**
 * POST /status/:id/cancel. The gateway only asks (spec.cancelRequestedTime, a spec change under the
 * resourceVersion it read); the controller decides, in its own writes, whether the cancel came before the signing
 * (controller/execution/phases/cancel.ts), and the answer is read from what it decided. So a cancel and a signing
 * can never both win: a request ends cancelled with no operation, or keeps its signed operation and the cancel is
 * answered 409. Asking again changes nothing and gets the same answer.
 */
export async function cancelRequest(ctx: GatewayContext, id: string, apiClient: ApiClient): Promise<CancelOutcome> {
  for (let attempt = 0; attempt < 5; attempt++) {
    let current = await ownRequest(ctx, id, apiClient);
    const decided = decisionOf(current);
    if (decided) return decided;
    if (current.spec.cancelRequestedTime === undefined) {
      try {
        current = await ctx.store.update({ ...current, spec: { ...current.spec, cancelRequestedTime: new Date().toISOString() } });
      } catch (e) {
        // Changed since it was read (the controller wrote its status, a payment came): look again.
        if (isStoreError(e, 'Conflict') || isStoreError(e, 'NotFound')) continue;
        throw e;
      }
    }
    const seen = await waitForDecision(ctx.informer, id, ctx.decisionTimeoutMs, current);
    return seen ?? { kind: 'requested', request: ctx.informer.get(id) ?? current };
  }
  throw new GatewayError(503, 'cancel_busy', `request ${id} kept changing while the cancel was recorded; retry`, {
    details: { request_id: id },
    headers: { 'retry-after': '1' },
  });
}

/**
 * What a request's state says about a cancel, or undefined while nothing is decided (not signed, not finished).
 * States only move forward here: a cancelled request stays so, and a signed operation is never removed.
 */
export function decisionOf(r: ExecutionRequest): CancelOutcome | undefined {
  const s = r.status;
  if (s?.phase === 'Failed' && s.failure?.code === CANCELLED_FAILURE) return { kind: 'cancelled', request: r };
  const finished = isTerminal(s?.phase);
  if (!finished && s?.userOperation === undefined) return undefined;
  const id = r.metadata.name;
  const status = statusOf(r);
  const signedAt = s?.userOperation ? (s.queuedTime ?? null) : null;
  const txHash = s?.txHash ?? null;
  const signed = s?.userOperation
    ? `its operation was signed${signedAt ? ` at ${signedAt}` : ''} (nonce ${s.userOperation.nonce})${txHash ? ` and broadcast as ${txHash}` : s.phase === 'Broadcasting' ? ' and handed to the bundler' : ''}`
    : '';
  const message = finished
    ? `request ${id} already finished as ${status}${s?.failure ? ` (${s.failure.code})` : ''}${signed ? `: ${signed}` : ''}`
    : `request ${id} can no longer be cancelled: ${signed}; it runs to a final state (GET /status/${id})`;
  return {
    kind: 'not_cancellable',
    body: { error: 'not_cancellable', message, request_id: id, reason: finished ? 'finished' : 'signed', status, signed_at: signedAt, tx_hash: txHash },
  };
}

/** The first decided state of `name` seen (the cache, `initial`, then each change), or undefined after `timeoutMs`. */
function waitForDecision(informer: ExecutionInformer, name: string, timeoutMs: number, initial: ExecutionRequest): Promise<CancelOutcome | undefined> {
  return new Promise((resolve) => {
    let settled = false;
    const finish = (d: CancelOutcome | undefined): void => {
      if (settled) return;
      settled = true;
      clearTimeout(timer);
      unsubscribe();
      resolve(d);
    };
    const timer = setTimeout(() => finish(undefined), timeoutMs);
    // Subscribed before the current state is looked at, so a change in between cannot be missed.
    const unsubscribe = informer.subscribe(name, (obj) => {
      const d = obj && decisionOf(obj);
      if (d) finish(d);
    });
    for (const obj of [informer.get(name), initial]) {
      const d = obj && decisionOf(obj);
      if (d) return finish(d);
    }
  });
}
