import type { FastifyReply, FastifyRequest } from 'fastify';
import { parsePaymentProof } from '../../api/http/index.ts';
import type { ApiClient } from '../../api/v1alpha1/index.ts';
import type { GatewayContext } from '../context.ts';
import { fieldError } from '../../http/errors.ts';
import type { AttachedPayment } from './attachPayment.ts';
import type { ExecutionInput } from './input.ts';
import { submitExecution } from './submit.ts';

/** The headers an executing call may carry (ExecuteHeadersSchema in src/api/http). */
export interface ExecutionHeaders {
  'idempotency-key'?: string | undefined;
  'x-payment-proof'?: string | undefined;
  'payment-signature'?: string | undefined;
}

/**
 * Runs `input` through the execute flow and answers as POST /execute does: 200 with the queued result, or 402
 * with the quote (and x402's PAYMENT-REQUIRED); every other outcome is thrown as a GatewayError. Every executing
 * route uses it (POST /execute, the protocol actions), so payments, idempotency and answers are one code path.
 */
export async function executeAndAnswer(
  ctx: GatewayContext,
  client: ApiClient,
  request: Pick<FastifyRequest, 'protocol' | 'host' | 'url'> & { headers: ExecutionHeaders },
  reply: FastifyReply,
  input: ExecutionInput,
) {
  const headers = request.headers;
  const submitted = await submitExecution(ctx, client, input, {
    idempotencyKey: headers['idempotency-key'],
    payment: paymentOf(client, headers['x-payment-proof'], headers['payment-signature']),
    resourceUrl: `${request.protocol}://${request.host}${request.url.split('?')[0]}`,
  });
  if (submitted.replayed) reply.header('idempotent-replayed', 'true');
  if (submitted.kind === 'payment_required') return reply.code(402).headers(submitted.answer.headers).send(submitted.answer.body);
  reply.headers(submitted.headers);
  return submitted.result;
}

/** The payment an executing call carries: one of the two headers, never both; none for a sponsored key (ignored). */
export function paymentOf(client: ApiClient, rawProof: string | undefined, signature: string | undefined): AttachedPayment | undefined {
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
      ...(proof.signature !== undefined && { signature: proof.signature }),
    },
  };
}
