import { CANCELLED_FAILURE, type ExecutionRequest, type Failure } from '../api/v1alpha1/index.ts';
import type { SimulationFailure } from '../chain/types.ts';
import { GatewayError } from './errors.ts';

/**
 * Failures of a simulation (direct, from POST /simulate, or the controller's, recorded on a Failed request)
 * as client errors: a revert or a wallet that cannot pay is the caller's to fix (400); a chain that did not
 * answer is ours and retryable (503).
 */
export interface FailureLike {
  code: SimulationFailure['code'] | (string & {});
  message: string;
  callIndex?: number;
  revertReason?: string;
  revertData?: string;
  policy?: { name: string; rule?: string | undefined; budget?: string | undefined };
}

export function simulationFailureError(
  failure: FailureLike,
  chain: string,
  requestId?: string,
): GatewayError {
  const common = {
    ...(requestId !== undefined ? { request_id: requestId } : {}),
    reason: failure.message,
    ...(failure.callIndex !== undefined ? { call_index: failure.callIndex } : {}),
  };
  switch (failure.code) {
    case 'simulation_reverted':
      return new GatewayError(400, 'simulation_failed', `simulation reverted: ${failure.revertReason ?? failure.message}`, {
        details: {
          ...common,
          revert_reason: failure.revertReason ?? null,
          ...(failure.revertData !== undefined ? { revert_data: failure.revertData } : {}),
        },
      });
    case 'insufficient_funds':
      return new GatewayError(400, 'insufficient_funds', failure.message, { details: common });
    case 'rpc_unavailable':
    case 'chain_unavailable':
      return new GatewayError(503, 'chain_unavailable', `${chain} is not available; retry with backoff`, {
        details: { ...common, chain },
        headers: { 'retry-after': '1' },
      });
    case 'payment_not_received':
      // The request's payment window closed unpaid (an Idempotency-Key replay of it): send it again, unkeyed
      // or with a new key, for a new quote; a payment already made still pays a new request.
      return new GatewayError(400, 'payment_not_received', failure.message, { details: common });
    case 'policy_denied':
    case 'agent_suspended':
      // An AgentPolicy of the key refused it (docs/policies.md): nothing was queued, nothing paid.
      return new GatewayError(403, failure.code, failure.message, {
        details: { ...common, policy: failure.policy?.name ?? null, rule: failure.policy?.rule ?? null, ...(failure.policy?.budget !== undefined && { budget: failure.policy.budget }) },
      });
    case CANCELLED_FAILURE:
      // Its caller cancelled it (POST /status/:id/cancel; an Idempotency-Key replay of it): nothing was executed.
      return new GatewayError(409, 'request_cancelled', failure.message, { details: common });
    default:
      return new GatewayError(500, 'execution_failed', failure.message, {
        details: { ...common, failure_code: failure.code },
      });
  }
}

/** The answer to POST /execute when the controller failed the request before queueing it. */
export function failedRequestError(request: ExecutionRequest): GatewayError {
  const failure: Failure = request.status?.failure ?? { code: 'unknown', message: 'the request failed' };
  return simulationFailureError(failure, request.spec.chain, request.metadata.name);
}
