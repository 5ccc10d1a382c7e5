import type { ChainConfig } from '../config/chainConfig.ts';
import type { ChainName } from '../config/chains.ts';
import type { Logger } from '../lib/logger.ts';
import type { ResourceStore } from '../store/types.ts';
import { createPaymentPolicies } from './policies.ts';
import { claimSettlement } from './settlementClaim.ts';
import { DEFAULT_PAYMENT_SETTINGS } from './settings.ts';
import { paymentTermsOf } from './terms.ts';
import type { ChainPaymentTerms, PaymentPolicies, PaymentSettings } from './types.ts';
import { createX402Facilitator, type X402ChainWorker } from './x402/index.ts';

export interface PaymentsSetup {
  /** For the execution controller: the three modes. */
  policies: PaymentPolicies;
  /** For the gateway: what it prices with and whether its 402s offer x402. */
  terms: ReadonlyMap<ChainName, ChainPaymentTerms>;
  settings: PaymentSettings;
  x402: boolean;
}

export interface PaymentsSetupOptions {
  store: ResourceStore;
  namespace: string;
  chains: readonly Pick<ChainConfig, 'name' | 'chainId' | 'entryPoint' | 'treasury' | 'tokens' | 'nativeUsdPrice' | 'paymentConfirmations'>[];
  settings?: Partial<PaymentSettings> | undefined;
  /**
   * The chain workers x402 verifies and settles through (each owns the settler account of its chain); without them
   * x402 is not offered.
   */
  x402Workers?: ReadonlyMap<ChainName, X402ChainWorker> | undefined;
  logger: Logger;
}

/** Payments for one process that runs both the controller and the gateway (the embedded mode, tests). */
export function setUpPayments(opts: PaymentsSetupOptions): PaymentsSetup {
  const settings: PaymentSettings = { ...DEFAULT_PAYMENT_SETTINGS, ...opts.settings };
  const terms = paymentTermsOf(opts.chains);
  const workers = opts.x402Workers;
  const x402 = workers
    ? createX402Facilitator({
        chains: opts.chains.flatMap((c) => {
          const worker = workers.get(c.name);
          return worker ? [{ chainId: c.chainId, worker }] : [];
        }),
        beforeSend: claimSettlement(opts.store, opts.namespace),
      })
    : undefined;
  const policies = createPaymentPolicies({ store: opts.store, namespace: opts.namespace, terms, settings, x402, logger: opts.logger });
  return { policies, terms, settings, x402: x402 !== undefined };
}
