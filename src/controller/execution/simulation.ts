import type { Call, ExecutionRequest } from '../../api/v1alpha1/index.ts';
import { ChainError } from '../../chain/errors.ts';
import type { ChainWorker, SimulateOptions, SimulationFailure, SimulationResult } from '../../chain/types.ts';
import type { ReconcileResult } from '../../runtime/index.ts';
import type { Reconciling } from './context.ts';
import { withProtocolError } from './protocolRevert.ts';
import { fail } from './status.ts';

/** Fails the request with a simulation's failure (a protocol action's revert decoded); a chain that did not answer is retried instead. */
export function simulationFailed(r: Reconciling, req: ExecutionRequest, error: SimulationFailure): Promise<ReconcileResult> {
  if (error.code === 'rpc_unavailable') throw new ChainError('rpc_unavailable', error.message);
  return fail(
    r,
    req,
    withProtocolError(req, {
      code: error.code,
      message: error.message,
      ...(error.callIndex !== undefined && { callIndex: error.callIndex }),
      ...(error.revertReason !== undefined && { revertReason: error.revertReason }),
      ...(error.revertData !== undefined && { revertData: error.revertData }),
    }),
    { Simulated: ['False', 'SimulationReverted', error.message] },
  );
}

/** The simulation of `calls` from the request's wallet; a revert fails the request (with its reason). */
export async function simulateOrFail(
  r: Reconciling,
  req: ExecutionRequest,
  worker: ChainWorker,
  calls: readonly Call[],
  opts?: SimulateOptions,
): Promise<{ ok: true; value: SimulationResult } | { ok: false; failed: Promise<ReconcileResult> }> {
  const sim = await worker.simulate({ apiClient: req.spec.apiClient, agentId: req.spec.agentId }, calls, opts);
  if (sim.ok) return sim;
  return { ok: false, failed: simulationFailed(r, req, sim.error) };
}
