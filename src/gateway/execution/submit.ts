import type { ApiClient } from '../../api/v1alpha1/index.ts';
import type { ExecutionResult } from '../../api/http/index.ts';
import { workerFor, type GatewayContext } from '../context.ts';
import { fieldError, GatewayError } from '../errors.ts';
import { failedRequestError } from '../failures.ts';
import { presentAccepted } from '../presenters.ts';
import { createOrReplay } from './createOrReplay.ts';
import { specOf, type ExecutionInput } from './input.ts';

export interface SubmitOptions {
  /** The caller's Idempotency-Key: a retry with the same key and input answers with the first request. */
  idempotencyKey?: string | undefined;
}

export interface Submitted {
  result: ExecutionResult;
  /** The answer is the request an earlier attempt with the same Idempotency-Key created. */
  replayed: boolean;
}

/**
 * The execute flow, for every route that executes (POST /execute, the protocol actions): check what the key
 * allows, create the ExecutionRequest (or find the one an Idempotency-Key retry refers to), wait for the
 * controller's decision on a watch, and answer: the 200 of spec §2.2, or an error carrying the request id.
 * Throws GatewayError for every answer that is not a 200.
 */
export async function submitExecution(
  ctx: GatewayContext,
  client: ApiClient,
  input: ExecutionInput,
  opts: SubmitOptions = {},
): Promise<Submitted> {
  const spec = specOf(client, input);
  const maxCalls = client.spec.limits.maxBatchCalls;
  if (spec.calls.length > maxCalls) {
    throw fieldError('batch_too_large', 'batch_calls', `has ${spec.calls.length} calls; this API key allows at most ${maxCalls}`);
  }
  if (!ctx.payments[spec.paymentMode].available) {
    // Refused before anything is created, so no request is left waiting for a payment flow that cannot happen.
    throw new GatewayError(
      501,
      'payment_mode_unavailable',
      `this API key's payment mode (${spec.paymentMode}) is not available on this deployment yet`,
      { details: { payment_mode: spec.paymentMode } },
    );
  }
  const worker = workerFor(ctx, spec.chain);
  // SSRF: a callback URL aimed inside the network is refused now; the sender checks again at connect time.
  const refused = spec.callbackUrl === undefined ? undefined : await ctx.callbackGuard.check(spec.callbackUrl);
  if (refused !== undefined) throw fieldError('callback_url_not_allowed', 'callback_url', refused);

  const { request: created, replayed } = await createOrReplay(ctx.store, ctx.namespace, spec, opts.idempotencyKey);
  const id = created.metadata.name;
  const decision = await ctx.waiter.wait(id, ctx.decisionTimeoutMs, created);
  switch (decision.kind) {
    case 'accepted': {
      const address =
        decision.request.status?.smartWalletAddress ??
        (await worker.resolveWallet({ apiClient: spec.apiClient, agentId: spec.agentId })).address;
      return { result: presentAccepted(decision.request, address), replayed };
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
}
