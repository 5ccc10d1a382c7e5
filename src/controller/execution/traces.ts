/**
 * The execution controller's spans at its seams (src/lib/tracing.ts): each call to a chain worker, and each status
 * write, in the trace of the request being reconciled. With tracing off both return what they were given.
 */
import type { ChainWorker } from '../../chain/types.ts';
import { inSpan, tracingOn, TRACERS } from '../../lib/tracing.ts';
import type { ResourceStore } from '../../store/types.ts';

/** The worker calls a request's timeline is made of, and their span names. */
const WORKER_SPANS = {
  simulate: 'worker.simulate',
  prepareOperation: 'worker.sign',
  submitOperation: 'worker.submit',
  getOperationOutcome: 'worker.outcome',
  withdrawOperation: 'worker.withdraw',
} as const satisfies Partial<Record<keyof ChainWorker, string>>;

export function traceWorkerCalls(worker: ChainWorker): ChainWorker {
  if (!tracingOn()) return worker;
  const traced = Object.create(worker) as ChainWorker & Record<string, unknown>;
  for (const [method, span] of Object.entries(WORKER_SPANS)) {
    const call = (worker as unknown as Record<string, (...args: unknown[]) => Promise<unknown>>)[method]!;
    traced[method] = (...args: unknown[]) => inSpan(TRACERS.controller, span, () => call.apply(worker, args));
  }
  return traced;
}

/** `status <phase>`: each status write, named by the phase it writes (`status Confirmed`: the request is final). */
export function traceStatusWrites(store: ResourceStore): ResourceStore {
  if (!tracingOn()) return store;
  return new Proxy(store, {
    get(target, prop) {
      if (prop === 'updateStatus') {
        return <T extends Parameters<ResourceStore['updateStatus']>[0]>(obj: T) => {
          const phase = (obj as { status?: { phase?: string } }).status?.phase ?? 'unknown';
          return inSpan(TRACERS.controller, `status ${phase}`, () => target.updateStatus(obj), { 'agentwallet.phase': phase });
        };
      }
      const value = Reflect.get(target, prop, target) as unknown;
      return typeof value === 'function' ? (value as (...a: unknown[]) => unknown).bind(target) : value;
    },
  });
}
