import type { FastifyPluginAsyncZod } from 'fastify-type-provider-zod';
import { callsOf, ExecutionResultSchema, SimulateBodySchema } from '../../api/http/index.ts';
import { clientOf } from '../auth.ts';
import type { GatewayContext } from '../context.ts';
import { simulateExecution } from '../execution/index.ts';
import { errorResponses, jsonResponse } from '../../http/openapi.ts';

/** Stateless: nothing is stored; GET /status on the `sim_...` request_id is 404. */
export function simulateRoutes(ctx: GatewayContext): FastifyPluginAsyncZod {
  return async (app) => {
    app.post(
      '/simulate',
      {
        schema: {
          tags: ['execution'],
          operationId: 'simulate',
          summary: 'Simulate one call from the agent’s smart wallet: gas and the cost this key would pay',
          security: [{ apiKey: [] }],
          body: SimulateBodySchema,
          response: {
            200: jsonResponse('The simulation succeeded (spec §2.2; status pending, nothing broadcast)', ExecutionResultSchema),
            ...errorResponses(400, 401, 403, 413, 415, 429, 500, 503),
          },
        },
      },
      async (request) =>
        (await simulateExecution(ctx, clientOf(request), { agentId: request.body.agent_id, chain: request.body.chain, calls: callsOf(request.body) })).result,
    );
  };
}
