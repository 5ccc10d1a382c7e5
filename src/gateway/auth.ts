import type { FastifyReply, FastifyRequest } from 'fastify';
import type { ApiClient } from '../api/v1alpha1/index.ts';
import { authenticateApiKey } from '../keys/authenticate.ts';
import type { GatewayContext } from './context.ts';
import { GatewayError } from './errors.ts';

/**
 * X-API-Key authentication for the protected scope (an onRequest hook, so it runs before the body is even
 * read and an unauthenticated caller learns nothing from validation). The `error` texts are spec §5.6's, verbatim.
 * Unknown, malformed, disabled and wrong-secret keys all get the same answer.
 */
export const MISSING_KEY = 'missing X-API-Key header';
export const INVALID_KEY = 'invalid API key';

const clients = new WeakMap<FastifyRequest, ApiClient>();

export function authHook(ctx: GatewayContext) {
  return async function authenticate(request: FastifyRequest, _reply: FastifyReply): Promise<void> {
    const header = request.headers['x-api-key'];
    const result = await authenticateApiKey(ctx.store, Array.isArray(header) ? header[0] : header, ctx.namespace, ctx.apiClients?.get);
    if (!result.ok) {
      throw result.reason === 'missing'
        ? new GatewayError(401, MISSING_KEY, 'send your API key in the X-API-Key header')
        : new GatewayError(401, INVALID_KEY, 'the X-API-Key is unknown or no longer active');
    }
    clients.set(request, result.client);
  };
}

/** The ApiClient that authenticated this request; only valid inside the protected scope. */
export function clientOf(request: FastifyRequest): ApiClient {
  const client = clients.get(request);
  if (!client) throw new Error('clientOf called outside the authenticated scope');
  return client;
}
