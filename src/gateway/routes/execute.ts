import type { FastifyPluginAsyncZod } from 'fastify-type-provider-zod';
import {
  callsOf,
  ExecuteBodySchema,
  ExecuteHeadersSchema,
  ExecutionResultSchema,
  PaymentRequiredSchema,
  parsePaymentProof,
  PaymentVerificationFailedSchema,
} from '../../api/http/index.ts';
import type { ApiClient } from '../../api/v1alpha1/index.ts';
import { clientOf } from '../auth.ts';
import type { GatewayContext } from '../context.ts';
import { fieldError } from '../errors.ts';
import { submitExecution, type AttachedPayment } from '../execution/index.ts';
import { errorResponses, jsonResponse } from '../openapi.ts';
import { z } from 'zod';

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
            ...errorResponses(400, 401, 413, 415, 422, 429, 431, 500, 503),
          },
        },
      },
      async (request, reply) => {
        const body = request.body;
        const client = clientOf(request);
        const submitted = await submitExecution(
          ctx,
          client,
          {
            agentId: body.agent_id,
            chain: body.chain,
            calls: callsOf(body),
            batch: body.batch_calls !== undefined,
            strategyId: body.strategy_id,
            callbackUrl: body.callback_url,
          },
          {
            idempotencyKey: request.headers['idempotency-key'],
            payment: paymentOf(client, request.headers['x-payment-proof'], request.headers['payment-signature']),
            resourceUrl: `${request.protocol}://${request.host}/execute`,
          },
        );
        if (submitted.replayed) reply.header('idempotent-replayed', 'true');
        if (submitted.kind === 'payment_required') {
          return reply.code(402).headers(submitted.answer.headers).send(submitted.answer.body);
        }
        reply.headers(submitted.headers);
        return submitted.result;
      },
    );
  };
}

/** The payment an execute call carries: one of the two headers, never both; none for a sponsored key (ignored). */
function paymentOf(client: ApiClient, rawProof: string | undefined, signature: string | undefined): AttachedPayment | undefined {
  if (client.spec.paymentMode === 'sponsored') return undefined;
  if (rawProof !== undefined && signature !== undefined) {
    throw fieldError('conflicting_payment', 'X-Payment-Proof', 'and PAYMENT-SIGNATURE were both sent: pay once, with one of them');
  }
  if (signature !== undefined) return { kind: 'x402', signature };
  if (rawProof === undefined) return undefined;
  const parsed = parsePaymentProof(rawProof);
  if (!parsed.ok) throw fieldError('invalid_payment_proof', 'X-Payment-Proof', parsed.message);
  const proof = parsed.value;
  return {
    kind: 'proof',
    proof: {
      ...(proof.request_id !== undefined && { requestId: proof.request_id }),
      payer: proof.payer,
      token: proof.token,
      chain: proof.chain,
      txHash: proof.tx_hash,
    },
  };
}
