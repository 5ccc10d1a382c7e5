import type { FastifyPluginAsyncZod } from 'fastify-type-provider-zod';
import {
  callsOf,
  ExecuteBodySchema,
  ExecuteHeadersSchema,
  ExecutionResultSchema,
  PaymentRequiredSchema,
  PaymentVerificationFailedSchema,
} from '../../api/http/index.ts';
import { clientOf } from '../auth.ts';
import type { GatewayContext } from '../context.ts';
import { executeAndAnswer } from '../execution/index.ts';
import { errorResponses, jsonResponse } from '../../http/openapi.ts';
import { z } from 'zod';
import { extractFrom, inSpan, TRACERS } from '../../lib/tracing.ts';

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
            402: jsonResponse(
              'Payment required (spec §2.8): pay, then send the same request with X-Payment-Proof (or, x402 clients, ' +
                'PAYMENT-SIGNATURE answering the PAYMENT-REQUIRED header). A payment that was refused: ' +
                'payment_verification_failed, with the reason and the quote still to pay (spec §7).',
              z.union([PaymentRequiredSchema, PaymentVerificationFailedSchema]),
            ),
            ...errorResponses(400, 401, 403, 409, 413, 415, 422, 429, 431, 500, 503),
          },
        },
      },
      async (request, reply) => {
        const body = request.body;
        // HTTP in → answer: the root of the request's trace (or a child of the caller's traceparent header).
        return inSpan(
          TRACERS.gateway,
          'execute',
          async (span) => {
            const answer = await executeAndAnswer(ctx, clientOf(request), request, reply, {
              agentId: body.agent_id,
              chain: body.chain,
              calls: callsOf(body),
              batch: body.batch_calls !== undefined,
              strategyId: body.strategy_id,
              callbackUrl: body.callback_url,
            });
            span?.setAttribute('http.response.status_code', reply.statusCode);
            return answer;
          },
          { 'agentwallet.chain': body.chain },
          extractFrom(request.headers, (h, k) => (typeof h[k] === 'string' ? h[k] : undefined)),
        );
      },
    );
  };
}
