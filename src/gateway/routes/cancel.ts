import type { FastifyPluginAsyncZod } from 'fastify-type-provider-zod';
import { isObjectName } from '../../api/v1alpha1/index.ts';
import { presentStatus } from '../../api/http/presentStatus.ts';
import { NotCancellableSchema, StatusParamsSchema, StatusRecordSchema } from '../../api/http/index.ts';
import { errorResponses, jsonResponse } from '../../http/openapi.ts';
import { clientOf } from '../auth.ts';
import { cancelRequest } from '../cancel.ts';
import type { GatewayContext } from '../context.ts';
import { GatewayError } from '../errors.ts';

export function cancelRoutes(ctx: GatewayContext): FastifyPluginAsyncZod {
  return async (app) => {
    app.post(
      '/status/:id/cancel',
      {
        schema: {
          tags: ['execution'],
          operationId: 'cancelRequest',
          summary: 'Cancel a request of this key before its operation is signed (idempotent)',
          description:
            'Asks to cancel the request. The controller decides against its signing: a request not signed yet ends `failed` with ' +
            'failure code `cancelled` (200, the status record; a payment it took stays the caller\'s as a credit); one whose ' +
            'operation was signed, or that finished, cannot be cancelled (409 `not_cancellable`, saying why). Asking again gets ' +
            'the same answer. 202: the cancel is recorded and nothing will be signed, but the controller has not ended it yet.',
          security: [{ apiKey: [] }],
          params: StatusParamsSchema,
          response: {
            200: jsonResponse('Cancelled: the status record, `failed` with failure code `cancelled`', StatusRecordSchema),
            202: jsonResponse('The cancel is recorded; the controller has not ended the request yet (poll GET /status/:id)', StatusRecordSchema),
            409: jsonResponse('Too late to cancel: signed (it will run), or finished', NotCancellableSchema),
            ...errorResponses(400, 401, 404, 413, 414, 415, 429, 431, 500, 503),
          },
        },
      },
      async (request, reply) => {
        const { id } = request.params;
        // Unknown ids and other keys' ids get the same answer as GET /status/:id: a request's existence is not disclosed.
        if (!isObjectName(id)) throw new GatewayError(404, 'not_found', 'no request with this id for this API key');
        const outcome = await cancelRequest(ctx, id, clientOf(request));
        switch (outcome.kind) {
          case 'cancelled':
            return reply.code(200).send(presentStatus(outcome.request));
          case 'requested':
            return reply.code(202).send(presentStatus(outcome.request));
          case 'not_cancellable':
            return reply.code(409).send(outcome.body);
        }
      },
    );
  };
}
