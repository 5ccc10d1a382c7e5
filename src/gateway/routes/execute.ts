import { createHash } from 'node:crypto';
import type { FastifyPluginAsyncZod } from 'fastify-type-provider-zod';
import {
  API_VERSION,
  GROUP,
  LABELS,
  type ApiClient,
  type ExecutionRequest,
  type ExecutionRequestSpec,
} from '../../api/v1alpha1/index.ts';
import { ACCEPTED_ANNOTATION } from '../../controller/execution/controller.ts';
import { isStoreError } from '../../store/types.ts';
import { clientOf } from '../auth.ts';
import { workerFor, type GatewayContext } from '../context.ts';
import { fieldError, GatewayError } from '../errors.ts';
import { failedRequestError } from '../failures.ts';
import { presentAccepted } from '../presenters.ts';
import { agentHash, idempotentRequestId, newRequestId } from '../requestIds.ts';
import {
  callsOf,
  errorResponses,
  ExecuteBodySchema,
  ExecuteHeadersSchema,
  ExecutionResultSchema,
  jsonResponse,
  PaymentRequiredSchema,
  type ExecuteBody,
} from '../schemas.ts';

/** sha256 of the canonical request a resource was created for, so an Idempotency-Key retry can be compared. */
export const IDEMPOTENCY_BODY_HASH = `${GROUP}/idempotency-body-sha256`;

/** The request as the service understands it: aliases resolved, addresses checksummed, value defaulted. */
function specOf(client: ApiClient, body: ExecuteBody): ExecutionRequestSpec {
  return {
    apiClient: client.metadata.name,
    agentId: body.agent_id,
    chain: body.chain,
    calls: callsOf(body),
    batch: body.batch_calls !== undefined,
    ...(body.strategy_id !== undefined ? { strategyId: body.strategy_id } : {}),
    ...(body.callback_url !== undefined ? { callbackUrl: body.callback_url } : {}),
    paymentMode: client.spec.paymentMode,
  };
}

function canonicalHash(spec: ExecutionRequestSpec): string {
  const canonical = JSON.stringify({
    agentId: spec.agentId,
    chain: spec.chain,
    batch: spec.batch,
    calls: spec.calls.map((c) => ({ target: c.target, value: c.value, data: c.data })),
    strategyId: spec.strategyId ?? null,
    callbackUrl: spec.callbackUrl ?? null,
  });
  return createHash('sha256').update(canonical, 'utf8').digest('hex');
}

/**
 * Creates the ExecutionRequest, or with an Idempotency-Key finds the one a previous attempt created: the name
 * is derived from (client, key), so of two concurrent attempts exactly one create succeeds and the other
 * reads the winner. Retries a few times in case the winner is deleted in between.
 */
async function admit(
  ctx: GatewayContext,
  spec: ExecutionRequestSpec,
  idempotencyKey: string | undefined,
): Promise<{ request: ExecutionRequest; replayed: boolean }> {
  const bodyHash = canonicalHash(spec);
  for (let attempt = 0; ; attempt++) {
    // The controller signs a wallet's operations in acceptance order, read from this annotation: it must sort
    // by time for every request, including those whose name is derived from an Idempotency-Key.
    const accepted = newRequestId();
    const name = idempotencyKey === undefined ? accepted : idempotentRequestId(spec.apiClient, idempotencyKey);
    const fresh: ExecutionRequest = {
      apiVersion: API_VERSION,
      kind: 'ExecutionRequest',
      metadata: {
        name,
        namespace: ctx.namespace,
        labels: {
          [LABELS.apiClient]: spec.apiClient,
          [LABELS.chain]: spec.chain,
          [LABELS.agentHash]: agentHash(spec.agentId),
        },
        annotations: { [ACCEPTED_ANNOTATION]: accepted, [IDEMPOTENCY_BODY_HASH]: bodyHash },
      },
      spec,
    };
    try {
      return { request: await ctx.store.create(fresh), replayed: false };
    } catch (e) {
      if (idempotencyKey === undefined || !isStoreError(e, 'AlreadyExists') || attempt >= 2) throw e;
    }
    let existing: ExecutionRequest;
    try {
      existing = await ctx.store.get('ExecutionRequest', name, ctx.namespace);
    } catch (e) {
      if (isStoreError(e, 'NotFound')) continue; // deleted between our create and get: try again
      throw e;
    }
    if (existing.spec.apiClient !== spec.apiClient || existing.metadata.annotations?.[IDEMPOTENCY_BODY_HASH] !== bodyHash) {
      throw new GatewayError(
        422,
        'idempotency_key_mismatch',
        'this Idempotency-Key was already used with a different request body; use a new key for a new request',
        { details: { request_id: name } },
      );
    }
    return { request: existing, replayed: true };
  }
}

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
        const client = clientOf(request);
        const body = request.body;
        const spec = specOf(client, body);
        const maxCalls = client.spec.limits.maxBatchCalls;
        if (spec.batch && spec.calls.length > maxCalls) {
          throw fieldError('batch_too_large', 'batch_calls', `has ${spec.calls.length} calls; this API key allows at most ${maxCalls}`);
        }
        if (!ctx.payments[spec.paymentMode].available) {
          // Refused before anything is created, so no request is left waiting for a payment flow that cannot
          // happen (manual and auto, spec §2.6, are not built yet).
          throw new GatewayError(
            501,
            'payment_mode_unavailable',
            `this API key's payment mode (${spec.paymentMode}) is not available on this deployment yet`,
            { details: { payment_mode: spec.paymentMode } },
          );
        }

        const worker = workerFor(ctx, spec.chain);

        const idempotencyKey = request.headers['idempotency-key'];
        const { request: created, replayed } = await admit(ctx, spec, idempotencyKey);
        if (replayed) reply.header('idempotent-replayed', 'true');
        const id = created.metadata.name;

        const decision = await ctx.waiter.wait(id, ctx.decisionTimeoutMs, created);
        switch (decision.kind) {
          case 'accepted': {
            const address =
              decision.request.status?.smartWalletAddress ??
              (await worker.resolveWallet({ apiClient: spec.apiClient, agentId: spec.agentId })).address;
            return presentAccepted(decision.request, address);
          }
          case 'failed':
            throw failedRequestError(decision.request);
          case 'payment_required':
            // Reachable only once a manual policy is available: the payments work answers 402 (spec §2.8) here,
            // with the quote it writes to status. Until then this cannot happen, and says so if it does.
            throw new GatewayError(501, 'payment_mode_unavailable', 'this request needs a payment flow that is not available yet', {
              details: { request_id: id },
            });
          case 'deleted':
            throw new GatewayError(500, 'execution_failed', 'the request was deleted before it was queued', {
              details: { request_id: id },
            });
          case 'timeout':
            throw new GatewayError(
              500,
              'decision_timeout',
              `the request was not queued within ${Math.round(ctx.decisionTimeoutMs / 1000)} s; it may still be; poll GET /status/${id} before retrying`,
              { details: { request_id: id } },
            );
        }
      },
    );
  };
}
