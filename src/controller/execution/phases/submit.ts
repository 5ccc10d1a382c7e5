import type { ExecutionRequest } from '../../../api/v1alpha1/index.ts';
import type { ChainWorker } from '../../../chain/types.ts';
import type { ReconcileResult } from '../../../runtime/index.ts';
import type { Reconciling } from '../context.ts';
import { conditions, write } from '../status.ts';
import { admitAndSign } from './admit.ts';

/** Hand the persisted operation to the bundler; a retry re-sends the very same operation. */
export async function submit(r: Reconciling, req: ExecutionRequest, worker: ChainWorker): Promise<ReconcileResult> {
  const op = req.status?.userOperation;
  if (!op) return admitAndSign(r, req, worker); // queued by a payment step but not signed yet
  await worker.submitOperation(op);
  const t = r.now();
  return write(r, req, (s) => ({
    ...s,
    phase: 'Broadcasting',
    submitAttempts: (s.submitAttempts ?? 0) + 1,
    conditions: conditions(s, t, {
      Submitted: ['True', 'BundlerAccepted', ''],
      Succeeded: ['Unknown', 'Broadcasting', ''],
    }),
  }));
}
