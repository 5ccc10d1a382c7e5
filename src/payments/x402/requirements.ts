import { encodePaymentRequiredHeader } from '@x402/core/http';
import type { Network, PaymentRequired, PaymentRequirements } from '@x402/core/types';
import { getAddress } from 'viem';
import { z } from 'zod';

export const PAYMENT_REQUIRED_HEADER = 'PAYMENT-REQUIRED';

/**
 * The client signs `validBefore = now + maxTimeoutSeconds` and the facilitator refuses an authorization with
 * less than 6 s left when it verifies: fewer than 30 s leaves a slow client or a skewed clock no room.
 */
export const MIN_MAX_TIMEOUT_SECONDS = 30;

const Address = z.string().regex(/^0x[0-9a-fA-F]{40}$/) as unknown as z.ZodType<`0x${string}`>;

/** What the service quoted for one request, as the 402 offers it over x402 (one `accepts` entry per token). */
export const X402QuoteSchema = z.object({
  chainId: z.number().int().positive(),
  /** The treasury. */
  payTo: Address,
  /** The URL of the request being paid for (x402 `resource.url`). */
  resourceUrl: z.string().url(),
  description: z.string().optional(),
  /** Only EIP-3009 tokens: x402 `exact` reaches any other token only through Permit2, which is not offered. */
  tokens: z
    .array(
      z.object({
        symbol: z.string().min(1),
        address: Address,
        /** The exact amount in the token's smallest unit: x402 `exact` moves this, no more, no less. */
        amountRaw: z.string().regex(/^[1-9][0-9]*$/, 'a positive integer'),
        /** The token's EIP-712 domain (what its `name()` and `version()` answer); the payer signs over it. */
        eip712: z.object({ name: z.string().min(1), version: z.string().min(1) }),
      }),
    )
    .min(1),
  maxTimeoutSeconds: z.number().int().min(MIN_MAX_TIMEOUT_SECONDS),
  requestId: z.string().min(1),
});
export type X402Quote = z.input<typeof X402QuoteSchema>;

/** CAIP-2 id of an EVM chain, as x402 v2 names networks. */
export const evmNetwork = (chainId: number): Network => `eip155:${chainId}`;

/**
 * The `accepts` entries of a quote: scheme `exact`, transfer method EIP-3009. `extra.request_id` lets a
 * client (and a log reader) tie a signed payment to the request it pays for; the payment echoes it.
 */
export function paymentRequirements(quote: X402Quote): PaymentRequirements[] {
  const q = X402QuoteSchema.parse(quote);
  return q.tokens.map((token) => ({
    scheme: 'exact',
    network: evmNetwork(q.chainId),
    asset: getAddress(token.address),
    amount: token.amountRaw,
    payTo: getAddress(q.payTo),
    maxTimeoutSeconds: q.maxTimeoutSeconds,
    extra: { name: token.eip712.name, version: token.eip712.version, assetTransferMethod: 'eip3009', request_id: q.requestId },
  }));
}

/** The x402 v2 PaymentRequired object; `error` says why a previous payment was refused, when one was. */
export function paymentRequired(quote: X402Quote, error?: string): PaymentRequired {
  return {
    x402Version: 2,
    error,
    resource: { url: quote.resourceUrl, description: quote.description, mimeType: 'application/json' },
    accepts: paymentRequirements(quote),
  };
}

/** The value of the PAYMENT-REQUIRED header: base64 of the PaymentRequired JSON. */
export const paymentRequiredHeader = (quote: X402Quote, error?: string): string => encodePaymentRequiredHeader(paymentRequired(quote, error));
