import { idempotentRequestId, type ExecutionRequestSpec } from '../../api/v1alpha1/index.ts';
import { evaluatePolicies, policyFailure, refusedBeforePlanning, requestFacts } from '../../policy/index.ts';
import { isStoreError } from '../../store/types.ts';
import type { GatewayContext } from '../context.ts';
import { simulationFailureError } from '../failures.ts';

/**
 * The early refusal: what the gateway's policy cache already refuses (a kill switch, a chain, a target, a
 * function, an action) is answered 403 before anything is created, so nothing is queued or paid. The controller
 * judges again on its own cache and decides. A retry of a request already created (same Idempotency-Key) goes on
 * to answer as that request did, whatever the policy says now.
 */
export async function refuseByPolicy(ctx: GatewayContext, spec: ExecutionRequestSpec, idempotencyKey: string | undefined): Promise<void> {
  const policies = ctx.policies.of(spec.apiClient);
  if (policies.length === 0) return;
  const decision = evaluatePolicies(policies, requestFacts(spec, spec.calls, new Date()));
  // A retry of a request already created answers as that request did: not a decision of this call.
  if (!decision.allowed && idempotencyKey !== undefined && (await exists(ctx, idempotentRequestId(spec.apiClient, idempotencyKey)))) return;
  ctx.onPolicyDecision(spec, decision);
  if (decision.allowed) return;
  throw simulationFailureError(policyFailure(decision), spec.chain);
}

async function exists(ctx: GatewayContext, name: string): Promise<boolean> {
  try {
    await ctx.store.get('ExecutionRequest', name, ctx.namespace);
    return true;
  } catch (e) {
    if (isStoreError(e, 'NotFound')) return false;
    throw e;
  }
}

/**
 * The early refusal of a protocol action before it is planned (planning reads the chain): what its agent's
 * policies refuse whatever calls it would plan — the action, its input, its chain, a kill switch.
 */
export function refuseActionByPolicy(ctx: GatewayContext, spec: Pick<ExecutionRequestSpec, 'apiClient' | 'agentId' | 'chain' | 'action'>): void {
  const policies = ctx.policies.of(spec.apiClient);
  if (policies.length === 0 || spec.action === undefined) return;
  const decision = refusedBeforePlanning(policies, {
    apiClient: spec.apiClient,
    agentId: spec.agentId,
    chain: spec.chain,
    action: { name: spec.action.name, input: spec.action.input },
    now: new Date(),
  });
  if (decision.allowed) return; // counted once, when its planned calls are judged
  ctx.onPolicyDecision(spec, decision);
  throw simulationFailureError(policyFailure(decision), spec.chain);
}
