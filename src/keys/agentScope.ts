import type { AgentScope } from '../api/v1alpha1/index.ts';

/** A scope as an operator gives it (the CLI, the admin socket); defined with the API's agent-id rules. */
export { OperatorAgentScopeSchema } from '../api/http/index.ts';

export { agentInScope } from '../api/v1alpha1/index.ts';

/** The scope in words, for refusals and listings: `agent id "bot-1"`, `agent ids starting "team-a/"`. */
export function describeAgentScope(scope: AgentScope | undefined): string {
  if (scope === undefined) return 'any agent id';
  return scope.match === 'exact' ? `agent id ${JSON.stringify(scope.agentId)}` : `agent ids starting ${JSON.stringify(scope.agentId)}`;
}
