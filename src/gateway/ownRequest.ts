import type { ExecutionRequest } from '../api/v1alpha1/index.ts';
import { isStoreError } from '../store/types.ts';
import type { GatewayContext } from './context.ts';
import { GatewayError } from './errors.ts';

/** Unknown ids and other keys' ids get the same answer: a request's existence is not disclosed. */
export const requestNotFound = () => new GatewayError(404, 'not_found', 'no request with this id for this API key');

/**
 * The caller's own request from the store, else from the archive (finished and past its retention: the retention
 * controller archived it whole before deleting it); any other, unknown or another key's, is requestNotFound.
 */
export async function ownRequest(ctx: GatewayContext, id: string, apiClient: string): Promise<ExecutionRequest> {
  let found: ExecutionRequest | undefined;
  try {
    found = await ctx.store.get('ExecutionRequest', id, ctx.namespace);
  } catch (e) {
    if (!isStoreError(e, 'NotFound')) throw e;
    found = await ctx.archive?.get(id, ctx.namespace);
  }
  if (found === undefined || found.spec.apiClient !== apiClient) throw requestNotFound();
  return found;
}
