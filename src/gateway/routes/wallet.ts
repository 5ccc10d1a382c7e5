import type { FastifyPluginAsyncZod } from 'fastify-type-provider-zod';
import { clientOf } from '../auth.ts';
import { workerFor, type GatewayContext } from '../context.ts';
import { presentBalances, presentWallet } from '../presenters.ts';
import { BalanceSchema, ErrorBodySchema, WalletQuerySchema, WalletRecordSchema } from '../schemas.ts';

const errors = { 400: ErrorBodySchema, 401: ErrorBodySchema, 429: ErrorBodySchema, 500: ErrorBodySchema };

export function walletRoutes(ctx: GatewayContext): FastifyPluginAsyncZod {
  return async (app) => {
    app.get(
      '/wallet',
      {
        schema: {
          tags: ['wallet'],
          summary: "Resolve the agent's smart wallet (counterfactual until its first execution)",
          security: [{ apiKey: [] }],
          querystring: WalletQuerySchema,
          response: { 200: WalletRecordSchema, ...errors },
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
          summary: "Native and token balances of the agent's smart wallet",
          security: [{ apiKey: [] }],
          querystring: WalletQuerySchema,
          response: { 200: BalanceSchema, ...errors },
        },
      },
      async (request) => {
        const { agent_id, chain } = request.query;
        const balances = await workerFor(ctx, chain).getBalances({
          apiClient: clientOf(request).metadata.name,
          agentId: agent_id,
        });
        return presentBalances(agent_id, chain, balances, ctx.chainTokens[chain]);
      },
    );
  };
}
