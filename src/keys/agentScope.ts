import type { AgentScope } from '../api/v1alpha1/index.ts';

/** Whether a key of this scope may act for `agentId` (no scope: any). Case-sensitive, as agent ids are. */
export function agentInScope(scope: AgentScope | undefined, agentId: string): boolean {
  if (scope === undefined) return true;
  return scope.match === 'exact' ? agentId === scope.agentId : agentId.startsWith(scope.agentId);
}

/** The scope in words, for refusals and listings: `agent id "bot-1"`, `agent ids starting "team-a/"`. */
export function describeAgentScope(scope: AgentScope | undefined): string {
  if (scope === undefined) return 'any agent id';
  return scope.match === 'exact' ? `agent id ${JSON.stringify(scope.agentId)}` : `agent ids starting ${JSON.stringify(scope.agentId)}`;
}
