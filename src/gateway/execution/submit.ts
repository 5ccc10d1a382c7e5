import type { ExecutionResult } from '../../api/http/index.ts';
import type { ApiClient, ExecutionRequest, ExecutionRequestSpec } from '../../api/v1alpha1/index.ts';
import type { ChainWorker } from '../../chain/types.ts';
import type { Decision } from '../decisionWaiter.ts';
import { ok } from '../../lib/result.ts';
import { evmNetwork, PAYMENT_RESPONSE_HEADER, paymentResponseHeader } from '../../payments/x402/index.ts';
import { workerFor, type GatewayContext } from '../context.ts';
import { fieldError, HttpError } from '../../http/errors.ts';
import { GatewayError } from '../errors.ts';
import { failedRequestError } from '../failures.ts';
import { presentAccepted } from '../presenters.ts';
import { attachPayment, withPayment, type AttachedPayment } from './attachPayment.ts';
import { createOrReplay } from './createOrReplay.ts';
import { specOf, type ExecutionInput } from './input.ts';
import { paymentAnswer, type PaymentAnswer } from './paymentAnswer.ts';
import { refuseByPolicy } from './policyCheck.ts';

export interface SubmitOptions {
  /** The caller's Idempotency-Key: a retry with the same key and input answers with the first request. */
  idempotencyKey?: string | undefined;
  /** A payment that came with the call (X-Payment-Proof or PAYMENT-SIGNATURE); a sponsored key's is ignored. */
  payment?: AttachedPayment | undefined;
  /** The URL an x402 offer names as its resource (the route's own). */
  resourceUrl?: string;
}

export type Submitted =
  /** The 200 of spec §2.2: queued (or further). */
  | { kind: 'queued'; result: ExecutionResult; headers: Record<string, string>; replayed: boolean }
  /** The 402 of spec §2.8 (or payment_verification_failed, §7): pay, then send the same request with the payment. */
  | { kind: 'payment_required'; answer: PaymentAnswer; replayed: boolean };

/**
 * The execute flow, for every route that executes (POST /execute, the protocol actions): check what the key
 * allows, create the ExecutionRequest — or attach the payment to the one awaiting it, or find the one an
 * Idempotency-Key retry refers to — wait for the controller's decision on a watch, and answer: queued, or
 * payment required. Throws GatewayError for every other answer (each carries the request id once there is one).
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
  const worker = workerFor(ctx, spec.chain);
  // SSRF: a callback URL aimed inside the network is refused now; the sender checks again at connect time.
  const refused = spec.callbackUrl === undefined ? undefined : await ctx.callbackGuard.check(spec.callbackUrl);
  if (refused !== undefined) throw fieldError('callback_url_not_allowed', 'callback_url', refused);

  // Sponsored requests take no payment: one sent along is ignored, as the spec's "no external proof" says.
  const payment = spec.paymentMode === 'sponsored' ? undefined : opts.payment;
  // What the policy cache refuses is answered now, nothing created: unless a payment comes with the call, which
  // may already be on chain. Then the controller decides, and a refusal leaves the payment the payer's (a credit,
  // or a proof not yet taken that still pays another request).
  if (payment === undefined) await refuseByPolicy(ctx, spec, opts.idempotencyKey);
  let request: ExecutionRequest;
  let replayed = false;
  let attachedGeneration: number | undefined;
  const attached = payment
    ? await attachPayment(ctx, { spec, idempotencyKey: opts.idempotencyKey, scope: client.spec.agentScope }, payment)
    : ({ kind: 'none' } as const);
  if (attached.kind === 'attached') {
    request = attached.request;
    attachedGeneration = attached.generation;
  } else if (attached.kind === 'settled') {
    request = attached.request;
    replayed = true;
  } else {
    const created = await createOrReplay(ctx.store, ctx.namespace, payment ? withPayment(spec, payment) : spec, opts.idempotencyKey, client.spec.agentScope);
    request = created.request;
    replayed = created.replayed;
    if (payment && !replayed) attachedGeneration = request.metadata.generation ?? 1;
  }

  const id = request.metadata.name;
  const decision = await ctx.waiter.wait(id, ctx.decisionTimeoutMs, request, attachedGeneration);
  try {
    return await answerDecision(ctx, worker, spec, decision, id, { payment, attachedGeneration, replayed, resourceUrl: opts.resourceUrl });
  } catch (e) {
    // A replay answers as the first attempt did, refusals included, and says it is one.
    throw replayed && e instanceof HttpError ? asReplay(e) : e;
  }
}

function answerDecision(
  ctx: GatewayContext,
  worker: ChainWorker,
  spec: ExecutionRequestSpec,
  decision: Decision,
  id: string,
  o: { payment: AttachedPayment | undefined; attachedGeneration: number | undefined; replayed: boolean; resourceUrl: string | undefined },
): Promise<Submitted> | Submitted {
  const walletOf = async (r: ExecutionRequest) =>
    r.status?.smartWalletAddress ?? (await worker.resolveWallet({ apiClient: spec.apiClient, agentId: spec.agentId })).address;
  switch (decision.kind) {
    case 'accepted':
      return walletOf(decision.request).then((wallet) => ({
        kind: 'queued',
        result: presentAccepted(decision.request, wallet),
        headers: o.payment?.kind === 'x402' ? x402Settled(decision.request) : {},
        replayed: o.replayed,
      }));
    case 'payment_required':
      return walletOf(decision.request).then((wallet) => ({
        kind: 'payment_required',
        answer: paymentAnswer(ctx, decision.request, wallet, {
          attachedGeneration: o.attachedGeneration,
          resourceUrl: o.resourceUrl ?? 'urn:agent-wallet:execute',
        }),
        replayed: o.replayed,
      }));
    case 'failed':
      throw failedRequestError(decision.request);
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

/** The same error answer, marked as the replay of an Idempotency-Key's request (Idempotent-Replayed: true). */
function asReplay(e: HttpError): HttpError {
  return new GatewayError(e.statusCode, e.code, e.shortMessage, {
    ...(e.details && { details: e.details }),
    headers: { ...e.headers, 'idempotent-replayed': 'true' },
    cause: e,
  });
}

/** x402's PAYMENT-RESPONSE for a request an x402 payment paid: the settlement transaction. */
function x402Settled(request: ExecutionRequest): Record<string, string> {
  const paid = request.status?.payment?.paid;
  const quote = request.status?.payment?.quote;
  if (paid?.method !== 'x402' || paid.txHash === undefined || !quote) return {};
  const network = evmNetwork(quote.chainId);
  return {
    [PAYMENT_RESPONSE_HEADER.toLowerCase()]: paymentResponseHeader(
      ok({ payer: paid.payer as `0x${string}`, transaction: paid.txHash as `0x${string}`, network, amountRaw: paid.amountRaw }),
      { network },
    ),
  };
}
