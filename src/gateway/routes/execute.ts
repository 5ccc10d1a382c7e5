import type { FastifyPluginAsyncZod } from 'fastify-type-provider-zod';
import {
  callsOf,
  ExecuteBodySchema,
  ExecuteHeadersSchema,
  ExecutionResultSchema,
  PaymentRequiredSchema,
} from '../../api/http/index.ts';
import { clientOf } from '../auth.ts';
import type { GatewayContext } from '../context.ts';
import { submitExecution } from '../execution/index.ts';
import { errorResponses, jsonResponse } from '../openapi.ts';

export function executeRoutes(ctx: GatewayContext): FastifyPluginAsyncZod {
  return async (app) => {
    app.post(
      '/execute',
      {
        schema: {
          tags: ['execution'],
          operationId: 'execute',
          summary: 'Execute one call or a batch from the agent’s smart wallet; answers once the request is queued',
          security: [{ apiKey: [] }],
          headers: ExecuteHeadersSchema,
          body: ExecuteBodySchema,
          response: {
            200: jsonResponse('The request is queued (spec §2.2): poll GET /status/:id', ExecutionResultSchema),
            402: jsonResponse('Payment required (spec §2.8)', PaymentRequiredSchema),
            ...errorResponses(400, 401, 413, 415, 422, 429, 500, 501, 503),
          },
        },
      },
      async (request, reply) => {
        const body = request.body;
        const { result, replayed } = await submitExecution(
          ctx,
          clientOf(request),
          {
            agentId: body.agent_id,
            chain: body.chain,
            calls: callsOf(body),
            batch: body.batch_calls !== undefined,
            strategyId: body.strategy_id,
            callbackUrl: body.callback_url,
          },
          { idempotencyKey: request.headers['idempotency-key'] },
        );
        if (replayed) reply.header('idempotent-replayed', 'true');
        return result;
      },
    );
  };
}
