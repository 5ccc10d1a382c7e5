import type { FastifyPluginAsyncZod } from 'fastify-type-provider-zod';
import { DripBodySchema, DripResultSchema, FaucetInfoSchema } from '../../api/http/faucet.ts';
import { jsonResponse } from '../../http/openapi.ts';
import type { Faucet } from '../faucet.ts';
import { faucetErrorResponses } from '../openapi.ts';

/** The JSON API: what agents and scripts call. */
export function apiRoutes(faucet: Faucet): FastifyPluginAsyncZod {
  return async (app) => {
    app.get(
      '/api/info',
      {
        schema: {
          tags: ['faucet'],
          operationId: 'getFaucetInfo',
          summary: 'The chains served, the aUSD addresses, the amount per drip and the limits',
          response: { 200: jsonResponse('The faucet’s settings', FaucetInfoSchema), ...faucetErrorResponses(500) },
        },
      },
      async () => faucet.info,
    );

    app.post(
      '/api/drip',
      {
        schema: {
          tags: ['faucet'],
          operationId: 'drip',
          summary: 'Send aUSD to a smart wallet and wait until the transfer is mined',
          description:
            'The only required field is `address` (the `smart_wallet_address` of GET /wallet); `chain` defaults to ethereum. ' +
            'Answers once the transfer is mined, with its hash and the balance it left.',
          body: DripBodySchema,
          response: {
            200: jsonResponse('Sent and mined', DripResultSchema),
            ...faucetErrorResponses(400, 413, 415, 429, 500, 503),
          },
        },
      },
      async (request) => faucet.drip(request.body, request.ip),
    );
  };
}
