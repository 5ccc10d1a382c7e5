import type { PaymentRequired, PaymentVerificationFailed } from '../../api/http/index.ts';
import type { ExecutionRequest, PaymentQuote } from '../../api/v1alpha1/index.ts';
import { paymentRequiredHeader, PAYMENT_REQUIRED_HEADER } from '../../payments/x402/index.ts';
import { x402Offer } from '../../payments/x402/offer.ts';
import type { GatewayContext } from '../context.ts';

/** A 402 of POST /execute: spec §2.8's body (or §7's payment_verification_failed), and its headers. */
export interface PaymentAnswer {
  body: PaymentRequired | PaymentVerificationFailed;
  headers: Record<string, string>;
}

/** Seconds a caller should wait before sending a payment again that was not deep enough yet: about a block. */
const RETRY_PAYMENT_AFTER_SECONDS = 2;

/**
 * The 402 for a request awaiting payment, from the quote the controller stored on it. When the payment this
 * caller attached (generation `attachedGeneration`) was refused, the body says why (`payment_verification_failed`,
 * with `reason`) and still carries the quote to pay; a refusal of an earlier attempt is not this caller's.
 * Where the deployment settles x402, PAYMENT-REQUIRED offers the same quote to x402 clients.
 */
export function paymentAnswer(
  ctx: GatewayContext,
  request: ExecutionRequest,
  walletAddress: string,
  opts: { attachedGeneration?: number | undefined; resourceUrl: string },
): PaymentAnswer {
  const quote = request.status!.payment!.quote!;
  const rejection = request.status?.payment?.rejection;
  const required = quoteBody(request, quote, walletAddress);
  const headers: Record<string, string> = {};
  const terms = ctx.payments.terms.get(request.spec.chain);
  const offer = ctx.payments.x402 && terms ? x402Offer(quote, terms, request.metadata.name, opts.resourceUrl) : undefined;
  const ours = rejection !== undefined && opts.attachedGeneration !== undefined && rejection.observedGeneration === opts.attachedGeneration;
  const told = ours ? rejection : undefined;
  if (offer) headers[PAYMENT_REQUIRED_HEADER.toLowerCase()] = paymentRequiredHeader(offer, told?.message);
  if (!told) return { body: required, headers };
  if (told.retryable) headers['retry-after'] = String(RETRY_PAYMENT_AFTER_SECONDS);
  return {
    body: {
      ...required,
      error: 'payment_verification_failed',
      reason: told.reason,
      message: told.message,
      retryable: told.retryable,
      ...(told.confirmationsRemaining !== undefined && { confirmations_remaining: told.confirmationsRemaining }),
    },
    headers,
  };
}

function quoteBody(request: ExecutionRequest, quote: PaymentQuote, walletAddress: string): PaymentRequired {
  return {
    error: 'payment_required',
    amount_usd: quote.amountUsd,
    accepted_tokens: quote.tokens.map((t) => t.symbol),
    required_amount_raw: Object.fromEntries(quote.tokens.map((t) => [t.symbol, t.amountRaw])),
    payment_address: quote.recipient,
    chain: request.spec.chain,
    request_id: request.metadata.name,
    smart_wallet_address: walletAddress,
    ...(request.status?.l1DataGas !== undefined && { l1_data_gas: request.status.l1DataGas }),
  };
}
