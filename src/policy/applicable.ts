import { agentInScope, type AgentPolicy } from '../api/v1alpha1/index.ts';

/**
 * The policies of `policies` that govern `agentId` of key `apiClient`, in the order they are judged: the key-level
 * policy (no `agents`) first, as it bounds the others, then prefix policies from the widest, then exact ones. Ties
 * by name, so a refusal always names the same policy.
 */
export function applicablePolicies(policies: readonly AgentPolicy[], apiClient: string, agentId: string): AgentPolicy[] {
  return policies
    .filter((p) => p.spec.apiClient === apiClient && (p.spec.agents === undefined || agentInScope(p.spec.agents, agentId)))
    .sort((a, b) => rank(a) - rank(b) || a.metadata.name.localeCompare(b.metadata.name));
}

function rank(p: AgentPolicy): number {
  const scope = p.spec.agents;
  if (scope === undefined) return 0;
  // Wider prefixes first: 1 + length keeps every prefix after the key-level policy and before any exact one.
  return scope.match === 'prefix' ? 1 + scope.agentId.length / 1000 : 2;
}
