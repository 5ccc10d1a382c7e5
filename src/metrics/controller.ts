import type { ControllerMetrics, ReconcileOutcome } from '../runtime/controller.ts';
import { BoundedLabel, errorCode } from './labels.ts';
import type { Metrics } from './registry.ts';

/** controller-runtime's result label values. */
const RESULT: Readonly<Record<ReconcileOutcome, string>> = {
  done: 'success',
  requeueAfter: 'requeue_after',
  error: 'error',
  terminal: 'terminal_error',
};

/**
 * The ControllerMetrics (work queue and reconcile results) of the controller called `name`, for
 * `new Controller({ ..., metrics })`. Error codes come from the errors thrown (AgentWalletError's `code`);
 * the first 50 distinct ones per controller get a series each, later ones count as `other`.
 */
export function controllerMetrics(metrics: Metrics, name: string): ControllerMetrics {
  const controller = { controller: name };
  const codes = new BoundedLabel(50);
  return {
    workQueue: {
      added: () => metrics.workqueueAdds.inc(controller),
      depth: (n) => metrics.workqueueDepth.set(controller, n),
      retried: () => metrics.workqueueRetries.inc(controller),
      waited: (seconds) => metrics.workqueueQueueDuration.observe(controller, seconds),
      worked: (seconds) => metrics.workqueueWorkDuration.observe(controller, seconds),
    },
    reconciled({ outcome, seconds, error }) {
      metrics.reconcileTotal.inc({ controller: name, result: RESULT[outcome] });
      metrics.reconcileTime.observe(controller, seconds);
      if (outcome === 'error' || outcome === 'terminal') {
        metrics.reconcileErrors.inc({ controller: name, code: codes.value(errorCode(error)) });
      }
    },
  };
}
