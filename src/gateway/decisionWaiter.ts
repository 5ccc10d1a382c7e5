import type { ExecutionRequest } from '../api/v1alpha1/index.ts';
import type { ExecutionInformer } from './executionInformer.ts';

/**
 * What the controller decided about a new ExecutionRequest, as far as `POST /execute` cares: the gateway
 * answers only once the request has left `Pending` (as `kubectl wait --for=...` would), never by polling.
 */
export type Decision =
  /** Admitted to the queue, or already past it: the execute call succeeded. */
  | { kind: 'accepted'; request: ExecutionRequest }
  | { kind: 'payment_required'; request: ExecutionRequest }
  | { kind: 'failed'; request: ExecutionRequest }
  /** The resource disappeared before a decision (deleted by an operator). */
  | { kind: 'deleted' }
  | { kind: 'timeout' };

/**
 * The decision a resource's current state shows, or undefined while the controller is still deciding. With
 * `minGeneration`, a state written before the controller saw that generation of the spec (a payment attached
 * since) decides nothing yet.
 */
export function decisionOf(request: ExecutionRequest, minGeneration?: number): Decision | undefined {
  if (minGeneration !== undefined && (request.status?.observedGeneration ?? 0) < minGeneration) return undefined;
  switch (request.status?.phase) {
    case 'Queued':
    case 'Broadcasting':
    case 'Confirmed':
    case 'Reverted':
      return { kind: 'accepted', request };
    case 'PaymentRequired':
      return { kind: 'payment_required', request };
    case 'Failed':
      return { kind: 'failed', request };
    default: // undefined, Pending, PaymentVerified: the controller has not finished deciding
      return undefined;
  }
}

export interface DecisionWaiter {
  /**
   * Resolves with the decision about `name`: from `initial` (the object as this caller last saw it) or the
   * cache if already decided, else from the first change that decides it, else `timeout` after `timeoutMs`.
   */
  wait(name: string, timeoutMs: number, initial?: ExecutionRequest, minGeneration?: number): Promise<Decision>;
}

export function createDecisionWaiter(informer: ExecutionInformer): DecisionWaiter {
  return {
    wait(name, timeoutMs, initial, minGeneration) {
      return new Promise<Decision>((resolve) => {
        let settled = false;
        const finish = (d: Decision): void => {
          if (settled) return;
          settled = true;
          clearTimeout(timer);
          unsubscribe();
          resolve(d);
        };
        const timer = setTimeout(() => finish({ kind: 'timeout' }), timeoutMs);
        // Subscribe before looking at the current state, so a change in between cannot be missed.
        const unsubscribe = informer.subscribe(name, (obj) => {
          if (obj === undefined) return finish({ kind: 'deleted' });
          const d = decisionOf(obj, minGeneration);
          if (d) finish(d);
        });
        for (const obj of [informer.get(name), initial]) {
          const d = obj && decisionOf(obj, minGeneration);
          if (d) return finish(d);
        }
      });
    },
  };
}
