import type { PaymentMode, PaymentQuote } from '../api/v1alpha1/index.ts';
import type { SimulationResult } from '../chain/types.ts';
import { microToUsd, price, pricedGas, quoteTokens } from './pricing.ts';
import type { ChainPaymentTerms, PaymentSettings } from './types.ts';

export interface QuoteInputs {
  mode: PaymentMode;
  simulation: Pick<SimulationResult, 'estimatedGas' | 'maxFeePerGas'>;
  terms: ChainPaymentTerms;
  settings: PaymentSettings;
  /** The API client's own platform fee, when it has one (else the deployment's). */
  platformFeeUsd?: number | undefined;
  now: Date;
}

/**
 * The quote a request is held to (spec §2.8): what it costs under its mode, in USD and as a raw amount of every
 * token the chain accepts, paid to the treasury, valid until `expiresAt`. Stored on the request, so a payment is
 * judged against exactly what the caller was shown.
 */
export function makeQuote(q: QuoteInputs): PaymentQuote {
  const p = price({
    mode: q.mode,
    gas: pricedGas(q.mode, q.simulation.estimatedGas),
    maxFeePerGas: q.simulation.maxFeePerGas,
    nativeUsdPrice: q.terms.nativeUsdPrice,
    platformFeeUsd: q.platformFeeUsd ?? q.settings.platformFeeUsd,
  });
  return {
    amountUsd: microToUsd(p.payableMicroUsd),
    gasCostUsd: microToUsd(p.gasCostMicroUsd),
    feeUsd: microToUsd(p.feeMicroUsd),
    chainId: q.terms.chainId,
    recipient: q.terms.treasury,
    tokens: quoteTokens(q.terms.tokens, p.payableMicroUsd).map((t) => ({
      symbol: t.symbol,
      address: t.address,
      decimals: t.decimals,
      amountRaw: t.amountRaw.toString(),
    })),
    expiresAt: new Date(q.now.getTime() + q.settings.quoteTtlSeconds * 1000).toISOString(),
  };
}

/** Whether a stored quote still holds at `now`. */
export const quoteValid = (quote: PaymentQuote, now: Date): boolean => Date.parse(quote.expiresAt) > now.getTime();
