import type { Call, ExecutionRequestSpec, Failure } from '../api/v1alpha1/index.ts';
import type { PolicyDecision } from './evaluate.ts';
import type { PolicyFacts } from './facts.ts';

/** What the policies know of a request with these calls (its own, or those a re-plan derived), at `now`. */
export function requestFacts(spec: ExecutionRequestSpec, calls: readonly Call[], now: Date): PolicyFacts {
  return {
    apiClient: spec.apiClient,
    agentId: spec.agentId,
    chain: spec.chain,
    calls,
    ...(spec.action && { action: { name: spec.action.name, input: spec.action.input } }),
    now,
  };
}

/** A refusal as a request's failure (and the 403 the gateway answers with): its code, policy and rule, and why. */
export function policyFailure(d: Extract<PolicyDecision, { allowed: false }>): Failure {
  return {
    code: d.code,
    message: `${d.message}; nothing was executed`,
    ...(d.callIndex !== undefined && { callIndex: d.callIndex }),
    policy: { name: d.policy, ...(d.rule !== null && { rule: d.rule }) },
  };
}
