import type { FastifyPluginAsyncZod } from 'fastify-type-provider-zod';
import { clientOf } from '../auth.ts';
import { workerFor, type GatewayContext } from '../context.ts';
import { presentBalances, presentWallet } from '../presenters.ts';
import { BalanceSchema, WalletQuerySchema, WalletRecordSchema } from '../../api/http/index.ts';
import { errorResponses, jsonResponse } from '../../http/openapi.ts';

const errors = errorResponses(400, 401, 403, 429, 500, 503);

export function walletRoutes(ctx: GatewayContext): FastifyPluginAsyncZod {
  return async (app) => {
    app.get(
      '/wallet',
      {
        schema: {
          tags: ['wallet'],
          operationId: 'getWallet',
          summary: "Resolve the agent's smart wallet (counterfactual until its first execution)",
          security: [{ apiKey: [] }],
          querystring: WalletQuerySchema,
          response: { 200: jsonResponse('The wallet record (spec §2.1)', WalletRecordSchema), ...errors },
        },
      },
      async (request) => {
        const { agent_id, chain } = request.query;
        const wallet = await workerFor(ctx, chain).resolveWallet({
          apiClient: clientOf(request).metadata.name,
          agentId: agent_id,
        });
        return presentWallet(agent_id, chain, wallet);
      },
    );

    app.get(
      '/wallet/balance',
      {
        schema: {
          tags: ['wallet'],
          operationId: 'getWalletBalance',
          summary: "Native and token balances of the agent's smart wallet",
          security: [{ apiKey: [] }],
          querystring: WalletQuerySchema,
          response: { 200: jsonResponse('Native and token balances', BalanceSchema), ...errors },
        },
      },
      async (request) => {
        const { agent_id, chain } = request.query;
        const balances = await workerFor(ctx, chain).getBalances({
          apiClient: clientOf(request).metadata.name,
          agentId: agent_id,
        });
        return presentBalances(agent_id, chain, balances, ctx.payments.terms.get(chain)?.tokens);
      },
    );
  };
}
