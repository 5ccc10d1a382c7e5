import type { ApiClient, ExecutionRequest, ExecutionRequestSpec } from '../../api/v1alpha1/index.ts';
import { idempotentRequestId } from '../../api/v1alpha1/index.ts';
import { isStoreError } from '../../store/types.ts';
import type { GatewayContext } from '../context.ts';
import { findPaymentTarget, type AttachedPayment } from './attachPayment.ts';

/**
 * The request an executing call asks for again, if one exists: the one its Idempotency-Key names, or the one
 * its payment is for (a resend after a 402). A protocol action answers such a call from that request, without
 * planning again: the plan reads state the first execution may have changed (the tokens it spent), and a retry
 * must reach its request whatever the state is now. What it asks is compared with the request as before
 * (createOrReplay, attachPayment): a different ask is still refused.
 */
export async function requestAskedAgain(
  ctx: GatewayContext,
  client: ApiClient,
  asked: Pick<ExecutionRequestSpec, 'apiClient' | 'agentId' | 'chain' | 'action' | 'strategyId' | 'callbackUrl' | 'calls' | 'batch' | 'paymentMode'>,
  opts: { idempotencyKey?: string | undefined; payment?: AttachedPayment | undefined },
): Promise<ExecutionRequest | undefined> {
  const name =
    opts.idempotencyKey !== undefined
      ? idempotentRequestId(client.metadata.name, opts.idempotencyKey)
      : opts.payment && client.spec.paymentMode !== 'sponsored'
        ? findPaymentTarget(ctx, { spec: asked }, opts.payment)
        : undefined;
  if (name === undefined) return undefined;
  try {
    const found = await ctx.store.get('ExecutionRequest', name, ctx.namespace);
    return found.spec.apiClient === client.metadata.name ? found : undefined; // another key's: never seen
  } catch (e) {
    if (isStoreError(e, 'NotFound')) return undefined;
    throw e;
  }
}
