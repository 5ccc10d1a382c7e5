import type { FastifyPluginAsyncZod } from 'fastify-type-provider-zod';
import { isObjectName, type ExecutionRequest } from '../../api/v1alpha1/index.ts';
import { isStoreError } from '../../store/types.ts';
import { clientOf } from '../auth.ts';
import type { GatewayContext } from '../context.ts';
import { GatewayError } from '../errors.ts';
import { presentStatus } from '../../api/http/presentStatus.ts';
import { StatusParamsSchema, StatusRecordSchema } from '../../api/http/index.ts';
import { errorResponses, jsonResponse } from '../../http/openapi.ts';

export function statusRoutes(ctx: GatewayContext): FastifyPluginAsyncZod {
  return async (app) => {
    app.get(
      '/status/:id',
      {
        schema: {
          tags: ['execution'],
          operationId: 'getStatus',
          summary: 'State of an execution request (source of truth; poll every 2 to 5 s until terminal)',
          security: [{ apiKey: [] }],
          params: StatusParamsSchema,
          response: {
            200: jsonResponse('The status record (spec §2.3)', StatusRecordSchema),
            ...errorResponses(400, 401, 404, 414, 429, 500, 503),
          },
        },
      },
      async (request) => {
        const { id } = request.params;
        // Unknown ids and other keys' ids get the same answer: a request's existence is not disclosed.
        const notFound = new GatewayError(404, 'not_found', 'no request with this id for this API key');
        if (!isObjectName(id)) throw notFound;
        let found: ExecutionRequest | undefined;
        try {
          found = await ctx.store.get('ExecutionRequest', id, ctx.namespace);
        } catch (e) {
          if (!isStoreError(e, 'NotFound')) throw e;
          // Finished and past its retention: the retention controller archived it whole before deleting it.
          found = await ctx.archive?.get(id, ctx.namespace);
        }
        if (found === undefined || found.spec.apiClient !== clientOf(request).metadata.name) throw notFound;
        return presentStatus(found);
      },
    );
  };
}
