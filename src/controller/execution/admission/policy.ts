import { DEFAULT_NAMESPACE, type AgentPolicy, type Call, type ExecutionRequest } from '../../../api/v1alpha1/index.ts';
import { evaluatePolicies, policyFailure, requestFacts, type PolicyDecision } from '../../../policy/index.ts';
import { watchOf, type Watch } from '../../../runtime/index.ts';
import { AWAITING_PAYMENT_BY_KEY } from '../keyChange.ts';
import { SIGNED_BY_KEY } from '../signedByKey.ts';
import type { Reconciling } from '../context.ts';
import { fail } from '../status.ts';
import type { AdmissionStep } from './types.ts';

/** The AgentPolicy index of the controller's cache: policies by the key (ApiClient) they govern. */
export const POLICIES_BY_CLIENT = 'policiesByClient';
export const policyIndexers = () => ({ [POLICIES_BY_CLIENT]: (p: AgentPolicy): readonly string[] => [p.spec.apiClient] });

/** Fails `req` with a policy's refusal, setting PolicyAllowed. */
export function failByPolicy(r: Reconciling, req: ExecutionRequest, d: Extract<PolicyDecision, { allowed: false }>) {
  const reason = d.code === 'agent_suspended' ? 'AgentSuspended' : 'PolicyDenied';
  return fail(r, req, policyFailure(d), { PolicyAllowed: ['False', reason, d.message] });
}

/**
 * The policies of the request's key and agent (src/policy) judge its calls, after the simulation and before any
 * payment is asked or taken: a refusal fails it (403 to the caller), nothing queued, nothing paid. The gateway ran
 * the same evaluation on its own cache before creating the request; this one, on the controller's, decides.
 */
export const policyStep: AdmissionStep = {
  name: 'policy',
  condition: 'PolicyAllowed',
  async run(r, { req, t, calls }, found) {
    const policies = r.deps.policiesFor?.(req.spec.apiClient) ?? [];
    if (policies.length === 0) return { kind: 'pass', found: {} };
    const decision = evaluatePolicies(policies, { ...requestFacts(req.spec, calls, t), wallet: found.simulation?.wallet.address });
    r.deps.onPolicyDecision?.(req, decision);
    if (decision.allowed) return { kind: 'pass', found: {} };
    return { kind: 'stop', result: await failByPolicy(r, req, decision) };
  },
};

/**
 * The policies once more, right before an operation is signed: its own calls (without the auto fee's transfer the
 * service adds), with the wallet. A refusal here is counted; an acceptance was counted at admission.
 */
export function refusalAtSigning(r: Reconciling, req: ExecutionRequest, calls: readonly Call[], wallet: string | undefined): Extract<PolicyDecision, { allowed: false }> | undefined {
  const policies = r.deps.policiesFor?.(req.spec.apiClient) ?? [];
  if (policies.length === 0) return undefined;
  const d = evaluatePolicies(policies, { ...requestFacts(req.spec, calls, r.now()), wallet });
  if (d.allowed) return undefined;
  r.deps.onPolicyDecision?.(req, d);
  return d;
}

/**
 * The kill switch, looked at once more before a request is signed and at every look at an unsigned one: once the
 * controller has seen a policy of the request's agent suspended, nothing more of it is signed.
 */
export function suspensionOf(r: Reconciling, req: ExecutionRequest): Extract<PolicyDecision, { allowed: false }> | undefined {
  const policies = r.deps.policiesFor?.(req.spec.apiClient) ?? [];
  const suspended = policies.filter((p) => p.spec.suspended);
  if (suspended.length === 0) return undefined;
  // Judged on no calls: only the kill switch (and which policies apply) can refuse.
  const d = evaluatePolicies(suspended, requestFacts(req.spec, [], r.now()));
  if (d.allowed) return undefined;
  r.deps.onPolicyDecision?.(req, d);
  return d;
}

/**
 * The execution controller's watch of AgentPolicies: a kill switch turned on re-queues the key's requests waiting
 * for a payment now (they fail with `agent_suspended`), rather than when their quote's timer fires, and its signed
 * requests not yet finished (their operations are withdrawn now, phases/withdraw.ts), rather than at their next
 * poll. Requests being admitted or signed look at the cache on their own.
 */
export const policyWatch: Watch = watchOf({
  kind: 'AgentPolicy',
  map(change, cache) {
    if (!change.obj.spec.suspended || (change.type === 'updated' && change.old.spec.suspended)) return [];
    const requests = cache.informerFor('ExecutionRequest');
    return [...requests.byIndex(AWAITING_PAYMENT_BY_KEY, change.obj.spec.apiClient), ...requests.byIndex(SIGNED_BY_KEY, change.obj.spec.apiClient)]
      .map((r) => ({ namespace: r.metadata.namespace ?? DEFAULT_NAMESPACE, name: r.metadata.name }));
  },
});
