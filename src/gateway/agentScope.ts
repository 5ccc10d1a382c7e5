import type { FastifyReply, FastifyRequest } from 'fastify';
import { agentInScope, describeAgentScope } from '../keys/agentScope.ts';
import { clientOf } from './auth.ts';
import { GatewayError } from './errors.ts';

/** The answer to a key acting for an agent id outside its scope. */
export const agentNotAllowed = (scope: Parameters<typeof describeAgentScope>[0], agentId: string) =>
  new GatewayError(403, 'agent_not_allowed', `this API key acts only for ${describeAgentScope(scope)}, not ${JSON.stringify(agentId)}`, { details: { field: 'agent_id' } });

/**
 * An agent-scoped key (ApiClient.spec.agentScope) acts only for its agent ids: every protected route that names
 * an agent (`agent_id` in the validated body or query: wallet, simulate, execute, every protocol endpoint) is
 * refused with 403 agent_not_allowed before its handler runs, so nothing is planned, simulated, paid or queued.
 * One hook for the scope, so a route added later cannot forget it. Requests by id (status, cancel) are checked
 * where they are looked up (ownRequest).
 */
export async function agentScopeHook(request: FastifyRequest, _reply: FastifyReply): Promise<void> {
  const scope = clientOf(request).spec.agentScope;
  if (scope === undefined) return;
  for (const source of [request.body, request.query]) {
    const agentId = source && typeof source === 'object' ? (source as Record<string, unknown>)['agent_id'] : undefined;
    if (typeof agentId === 'string' && !agentInScope(scope, agentId)) throw agentNotAllowed(scope, agentId);
  }
}
