import type { AgentPolicy } from '../api/v1alpha1/index.ts';
import { rulesOf } from './rules.ts';

/**
 * Whether judging a request under `policies` (those that apply to it) needs the simulation's outflows: one of them
 * has an outflow or USD rule, or a USD budget (what leaves the wallet counts in it). Tracing costs the simulation
 * one more RPC call, so it is asked for only then.
 */
export function policiesNeedOutflows(policies: readonly AgentPolicy[]): boolean {
  return policies.some((p) => {
    if (p.spec.budgets?.some((b) => b.usd !== undefined)) return true;
    const rules = rulesOf(p);
    return rules.ok && rules.value.some((r) => r.judgesOutflows);
  });
}
