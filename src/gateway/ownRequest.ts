import type { ApiClient, ExecutionRequest } from '../api/v1alpha1/index.ts';
import { agentInScope } from '../keys/agentScope.ts';
import { isStoreError } from '../store/types.ts';
import type { GatewayContext } from './context.ts';
import { GatewayError } from './errors.ts';

/** Unknown ids and other keys' ids get the same answer: a request's existence is not disclosed. */
export const requestNotFound = () => new GatewayError(404, 'not_found', 'no request with this id for this API key');

/** Whether a request is this key's to see: made with it, for an agent id the key may still act for. */
export const ownedBy = (request: ExecutionRequest, client: ApiClient): boolean =>
  request.spec.apiClient === client.metadata.name && agentInScope(client.spec.agentScope, request.spec.agentId);

/**
 * The caller's own request from the store, else from the archive (finished and past its retention: the retention
 * controller archived it whole before deleting it); any other, unknown, another key's, or for an agent id outside
 * the key's scope (narrowed since), is requestNotFound.
 */
export async function ownRequest(ctx: GatewayContext, id: string, client: ApiClient): Promise<ExecutionRequest> {
  let found: ExecutionRequest | undefined;
  try {
    found = await ctx.store.get('ExecutionRequest', id, ctx.namespace);
  } catch (e) {
    if (!isStoreError(e, 'NotFound')) throw e;
    found = await ctx.archive?.get(id, ctx.namespace);
  }
  if (found === undefined || !ownedBy(found, client)) throw requestNotFound();
  return found;
}
