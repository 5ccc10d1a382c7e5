import type { PaymentQuote } from '../../api/v1alpha1/index.ts';
import type { ChainPaymentTerms } from '../types.ts';
import type { X402Quote } from './requirements.ts';

/** How long an x402 authorization the client signs is valid (validBefore = now + this). */
export const X402_MAX_TIMEOUT_SECONDS = 300;

/**
 * A stored quote as an x402 offer: one entry per quoted token that implements EIP-3009 on the chain (the only
 * tokens `exact` reaches without Permit2), each with its raw amount. The gateway answers a 402 with it, and
 * the controller matches a PAYMENT-SIGNATURE against the same offer rebuilt from the same quote. Undefined when
 * no quoted token takes x402 (USDT): the 402 then offers X-Payment-Proof only.
 */
export function x402Offer(quote: PaymentQuote, terms: ChainPaymentTerms, requestId: string, resourceUrl: string): X402Quote | undefined {
  const tokens = quote.tokens.flatMap((t) => {
    const config = terms.tokens.find((c) => c.address.toLowerCase() === t.address.toLowerCase());
    if (!config?.eip3009 || BigInt(t.amountRaw) === 0n) return [];
    return [{ symbol: t.symbol, address: t.address as `0x${string}`, amountRaw: t.amountRaw, eip712: config.eip3009 }];
  });
  if (tokens.length === 0) return undefined;
  return {
    chainId: quote.chainId,
    payTo: quote.recipient as `0x${string}`,
    resourceUrl,
    description: `agent-wallet execution ${requestId}`,
    tokens,
    maxTimeoutSeconds: X402_MAX_TIMEOUT_SECONDS,
    requestId,
  };
}
