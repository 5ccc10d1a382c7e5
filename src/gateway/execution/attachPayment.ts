import { agentInScope, ANNOTATIONS, idempotentRequestId, type AgentScope, type ExecutionRequest, type ExecutionRequestSpec, type PaymentProof } from '../../api/v1alpha1/index.ts';
import { isStoreError } from '../../store/types.ts';
import type { GatewayContext } from '../context.ts';
import { GatewayError } from '../errors.ts';
import { isSameRequest } from './createOrReplay.ts';

/** A payment that came with an execute call: an X-Payment-Proof, or an x402 PAYMENT-SIGNATURE as sent. */
export type AttachedPayment = { kind: 'proof'; proof: PaymentProof } | { kind: 'x402'; signature: string };

/** `spec` carrying `payment` (replacing any earlier one) as its next payment attempt. */
export function withPayment(spec: ExecutionRequestSpec, payment: AttachedPayment): ExecutionRequestSpec {
  return {
    ...spec,
    paymentProof: payment.kind === 'proof' ? payment.proof : undefined,
    x402Payment: payment.kind === 'x402' ? payment.signature : undefined,
    paymentAttempt: (spec.paymentAttempt ?? 0) + 1,
  };
}

export interface PaymentTarget {
  /** The request as this call asks for it: the one paid for must be the same (isSameRequest). */
  spec: ExecutionRequestSpec;
  idempotencyKey?: string | undefined;
  /** The caller's agent scope: a request of an agent outside it is never named to the caller. */
  scope?: AgentScope | undefined;
}

export type Attached =
  /** Attached to a request awaiting it: wait for the controller's verdict on this generation. */
  | { kind: 'attached'; request: ExecutionRequest; generation: number }
  /** The request is past payment (paid already, or failed): answer with it as it is. */
  | { kind: 'settled'; request: ExecutionRequest }
  /** No request awaits this payment: create one with it. */
  | { kind: 'none' };

/**
 * Which request a payment pays for (spec §2.5, §4.2 rule 4): the one its `request_id` names, else the one its
 * Idempotency-Key names, else this key's newest request for the same agent and the same body that awaits a
 * payment. Whichever: same key, same agent_id and same body, or the payment is refused before anything moves.
 */
export function findPaymentTarget(ctx: GatewayContext, target: PaymentTarget, payment: AttachedPayment): string | undefined {
  const named = payment.kind === 'proof' ? payment.proof.requestId : undefined;
  if (named !== undefined) return named;
  if (target.idempotencyKey !== undefined) return idempotentRequestId(target.spec.apiClient, target.idempotencyKey);
  const waiting = ctx.informer.list((r) => r.status?.phase === 'PaymentRequired' && isSameRequest(r, target.spec));
  const accepted = (r: ExecutionRequest) => r.metadata.annotations?.[ANNOTATIONS.accepted] ?? r.metadata.name;
  return waiting.sort((a, b) => (accepted(a) < accepted(b) ? 1 : -1))[0]?.metadata.name;
}

/**
 * Attaches `payment` to the request awaiting it (a spec change: its generation moves, and the controller
 * verifies it), retrying on a concurrent change. Every attachment counts an attempt, so the same payment sent
 * again (not deep enough before) is judged again.
 */
export async function attachPayment(ctx: GatewayContext, target: PaymentTarget, payment: AttachedPayment): Promise<Attached> {
  const name = findPaymentTarget(ctx, target, payment);
  if (name === undefined) return { kind: 'none' };
  for (let attempt = 0; attempt < 5; attempt++) {
    // First from the gateway's informer (no read: the update below carries its resourceVersion, so a copy that
    // trails the store costs a Conflict), then from the store.
    const cached = attempt === 0 ? ctx.informer.get(name) : undefined;
    let current: ExecutionRequest | undefined = cached && structuredClone(cached); // the informer's is frozen
    if (!current) {
      try {
        current = await ctx.store.get('ExecutionRequest', name, ctx.namespace);
      } catch (e) {
        if (isStoreError(e, 'NotFound')) return { kind: 'none' }; // gone (retention): a new request takes the payment
        throw e;
      }
    }
    if (current.spec.apiClient !== target.spec.apiClient) return { kind: 'none' }; // another key's: never touched, never told
    if (!isSameRequest(current, target.spec)) {
      // A request of an agent the key may no longer act for (its scope was narrowed) is not named.
      const named = agentInScope(target.scope, current.spec.agentId);
      throw new GatewayError(
        422,
        'payment_request_mismatch',
        `${named ? `request ${name}` : 'the request it names'} was made with a different agent_id or body: re-submit exactly the request the 402 answered, with the payment`,
        named ? { details: { request_id: name } } : {},
      );
    }
    // Its caller cancelled it: a payment is never attached to it (the controller ends it unpaid), and the caller is told.
    if (current.spec.cancelRequestedTime !== undefined && current.status?.userOperation === undefined) {
      throw new GatewayError(
        409,
        'request_cancelled',
        `request ${name} was cancelled at ${current.spec.cancelRequestedTime}: this payment was not taken for it; send the request again, unkeyed or with a new Idempotency-Key`,
        { details: { request_id: name } },
      );
    }
    const phase = current.status?.phase;
    if (phase === undefined || phase === 'Pending') {
      // The first submission is still being decided: wait for that, then attach.
      await ctx.waiter.wait(name, ctx.decisionTimeoutMs, current);
      continue;
    }
    // Its payment window closed unpaid: this payment goes to a new request for the same call instead.
    if (phase === 'Failed' && current.status?.failure?.code === 'payment_not_received') return { kind: 'none' };
    if (phase !== 'PaymentRequired') return { kind: 'settled', request: current };
    const spec = withPayment(current.spec, payment);
    try {
      const updated = await ctx.store.update({ ...current, spec });
      return { kind: 'attached', request: updated, generation: updated.metadata.generation ?? 0 };
    } catch (e) {
      if (!isStoreError(e, 'Conflict')) throw e; // else: changed meanwhile (status written, another payment): look again
    }
  }
  throw new GatewayError(503, 'payment_busy', `request ${name} kept changing while the payment was attached; retry`, {
    details: { request_id: name },
    headers: { 'retry-after': '1' },
  });
}
