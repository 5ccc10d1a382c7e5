import { DEFAULT_NAMESPACE, type AgentPolicy, type Call, type ExecutionRequest } from '../../../api/v1alpha1/index.ts';
import type { ChainWorker, SimulationResult } from '../../../chain/types.ts';
import { applicablePolicies, evaluatePolicies, policiesNeedOutflows, policyFailure, requestFacts, valueExecution, type PolicyDecision, type Valuation } from '../../../policy/index.ts';
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
  async run(r, { req, worker, t, calls }, found) {
    const policies = r.deps.policiesFor?.(req.spec.apiClient) ?? [];
    if (policies.length === 0) return { kind: 'pass', found: {} };
    // Valued only when an outflow or USD rule applies (the simulation step traced the outflows then).
    const value = needsOutflows(r, req) ? await valuationOf(r, req, worker, calls, found.simulation, t) : undefined;
    const decision = evaluatePolicies(policies, { ...requestFacts(req.spec, calls, t), wallet: found.simulation?.wallet.address, execution: value });
    r.deps.onPolicyDecision?.(req, decision);
    if (decision.allowed) return { kind: 'pass', found: value ? { value } : {} };
    return { kind: 'stop', result: await failByPolicy(r, req, decision) };
  },
};

/** A valuation that knows nothing: what an outflow or USD rule added since the valuation was made judges (doubt). */
const NOT_VALUED: Valuation = { outflows: undefined, unavailable: 'a rule on outflows was added since they were valued', lines: [] };

/** Whether the policies that apply to the request judge outflows or USD: its simulation must trace outflows. */
export function needsOutflows(r: Reconciling, req: ExecutionRequest): boolean {
  const policies = r.deps.policiesFor?.(req.spec.apiClient) ?? [];
  return policies.length > 0 && policiesNeedOutflows(applicablePolicies(policies, req.spec.apiClient, req.spec.agentId));
}

/**
 * The valuation of `calls`: from `sim` when it traced the outflows; else (a policy changed since the simulation
 * step, or none ran) from a simulation of its own. A simulation that fails leaves the outflows unknown, which a
 * rule on them judges as doubt.
 */
async function valuationOf(r: Reconciling, req: ExecutionRequest, worker: ChainWorker, calls: readonly Call[], sim: SimulationResult | undefined, t: Date): Promise<Valuation> {
  let traced: Pick<SimulationResult, 'outflows' | 'outflowsUnavailable'> | undefined = sim && (sim.outflows || sim.outflowsUnavailable) ? sim : undefined;
  if (!traced) {
    const again = await worker.simulate({ apiClient: req.spec.apiClient, agentId: req.spec.agentId }, calls, { outflows: true });
    traced = again.ok ? again.value : { outflowsUnavailable: { code: 'rpc_unsupported', message: `the simulation failed: ${again.error.message}` } };
  }
  return valueExecution(r.deps.prices?.get(req.spec.chain), traced, calls, t);
}

/**
 * What the outflow and USD rules judge at signing, when one applies: `admitted`, the valuation admission made of
 * these same calls in this reconcile, when there is one; else (signed in a later reconcile, after a payment) the
 * calls simulated and valued again now. Made before the last look, which then waits on nothing.
 */
export async function valuationAtSigning(r: Reconciling, req: ExecutionRequest, worker: ChainWorker, calls: readonly Call[], admitted: Valuation | undefined): Promise<Valuation | undefined> {
  if (!needsOutflows(r, req)) return undefined;
  return admitted ?? valuationOf(r, req, worker, calls, undefined, r.now());
}

/**
 * The policies once more, right before an operation is signed: its own calls (without the auto fee's transfer the
 * service adds), with the wallet and their valuation (valuationAtSigning). A refusal here is counted; an acceptance
 * was counted at admission. A policy given an outflow or USD rule since the valuation was made finds none: doubt.
 */
export function refusalAtSigning(
  r: Reconciling,
  req: ExecutionRequest,
  calls: readonly Call[],
  wallet: string | undefined,
  execution: Valuation | undefined,
): Extract<PolicyDecision, { allowed: false }> | undefined {
  const policies = r.deps.policiesFor?.(req.spec.apiClient) ?? [];
  if (policies.length === 0) return undefined;
  const t = r.now();
  const d = evaluatePolicies(policies, { ...requestFacts(req.spec, calls, t), wallet, execution: execution ?? (needsOutflows(r, req) ? NOT_VALUED : undefined) });
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
