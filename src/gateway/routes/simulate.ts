import type { FastifyPluginAsyncZod } from 'fastify-type-provider-zod';
import { clientOf } from '../auth.ts';
import { workerFor, type GatewayContext } from '../context.ts';
import { simulationFailureError } from '../failures.ts';
import { payableCostUsd } from '../presenters.ts';
import { newSimulationId } from '../requestIds.ts';
import { callsOf, errorResponses, ExecutionResultSchema, jsonResponse, SimulateBodySchema } from '../schemas.ts';

/**
 * Stateless: the chain worker simulates the call and nothing is stored. The `sim_...` request_id names this
 * answer only; GET /status on it is 404.
 */
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
            ...errorResponses(400, 401, 413, 415, 429, 500, 501, 503),
          },
        },
      },
      async (request) => {
        const client = clientOf(request);
        const body = request.body;
        const worker = workerFor(ctx, body.chain);
        const result = await worker.simulate({ apiClient: client.metadata.name, agentId: body.agent_id }, callsOf(body));
        if (!result.ok) throw simulationFailureError(result.error, body.chain);
        const sim = result.value;
        return {
          request_id: newSimulationId(),
          status: 'pending' as const,
          smart_wallet_address: sim.wallet.address,
          estimated_gas: Number(sim.estimatedGas),
          estimated_cost_usd: payableCostUsd(client.spec.paymentMode, sim.estimatedCostUsd),
          tx_hash: null,
          message: 'simulation succeeded; nothing was broadcast',
        };
      },
    );
  };
}
