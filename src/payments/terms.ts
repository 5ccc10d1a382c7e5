import type { ChainConfig } from '../config/chainConfig.ts';
import type { ChainName } from '../config/chains.ts';
import { makeQuote } from './quote.ts';
import type { ChainPaymentTerms, PaymentSettings } from './types.ts';
import type { PaymentMode } from '../api/v1alpha1/index.ts';
import type { SimulationResult } from '../chain/types.ts';

type TermsSource = Pick<ChainConfig, 'name' | 'chainId' | 'entryPoint' | 'treasury' | 'tokens' | 'nativeUsdPrice' | 'paymentConfirmations'>;

/** Each chain's payment terms, from the chains' configuration (the embedded mode's or the cluster's). */
export function paymentTermsOf(chains: readonly TermsSource[]): ReadonlyMap<ChainName, ChainPaymentTerms> {
  return new Map(
    chains.map((c) => [
      c.name,
      {
        chain: c.name,
        chainId: c.chainId,
        entryPoint: c.entryPoint,
        treasury: c.treasury,
        tokens: c.tokens,
        nativeUsdPrice: c.nativeUsdPrice,
        paymentConfirmations: c.paymentConfirmations,
      },
    ]),
  );
}

/**
 * What a simulated request would cost its caller under `mode` (spec §2.2 `estimated_cost_usd`, §2.6): the same
 * figure the quote of an execute shows — the auto mode's includes the gas of its transfer (pricedGas).
 */
export function payableEstimateUsd(
  mode: PaymentMode,
  simulation: Pick<SimulationResult, 'estimatedGas' | 'maxFeePerGas'>,
  terms: ChainPaymentTerms,
  settings: PaymentSettings,
  platformFeeUsd: number | undefined,
): number {
  if (mode === 'sponsored') return 0;
  return makeQuote({
    mode,
    simulation,
    terms,
    settings,
    platformFeeUsd,
    now: new Date(0),
  }).amountUsd;
}
