import { AgentId } from '../api/http/index.ts';
import { AgentScopeSchema, type AgentScope } from '../api/v1alpha1/index.ts';

/**
 * A scope as an operator gives it (the CLI, the admin socket): its agent id or prefix held to the API's agent-id
 * rules (no control characters, at most 256 code points), so it can match the ids the API accepts.
 */
export const OperatorAgentScopeSchema = AgentScopeSchema.extend({ agentId: AgentId });

export { agentInScope } from '../api/v1alpha1/index.ts';

/** The scope in words, for refusals and listings: `agent id "bot-1"`, `agent ids starting "team-a/"`. */
export function describeAgentScope(scope: AgentScope | undefined): string {
  if (scope === undefined) return 'any agent id';
  return scope.match === 'exact' ? `agent id ${JSON.stringify(scope.agentId)}` : `agent ids starting ${JSON.stringify(scope.agentId)}`;
}
