import { z } from 'zod';
import type { PaymentSettings } from './types.ts';

export const DEFAULT_PAYMENT_SETTINGS: PaymentSettings = { platformFeeUsd: 0.01, quoteTtlSeconds: 600, graceSeconds: 60, serviceAccounts: [] };

/** The `payments` section of the cluster configuration (the embedded mode takes the same fields as options). */
export const PaymentSettingsSchema = z
  .object({
    /** The platform fee per manual-mode execution, in USD (an API client may carry its own). */
    platformFeeUsd: z.number().min(0).max(1_000).default(DEFAULT_PAYMENT_SETTINGS.platformFeeUsd),
    /** How long a 402's quote holds; a payment after that is answered with a fresh quote. */
    quoteTtlSeconds: z.number().int().min(30).max(86_400).default(DEFAULT_PAYMENT_SETTINGS.quoteTtlSeconds),
    /** How long after its quote expired an unpaid request waits for a payment on its way (its amounts held as long). */
    graceSeconds: z.number().int().min(0).max(3_600).default(DEFAULT_PAYMENT_SETTINGS.graceSeconds),
    /**
     * Addresses the service sends from besides the chain workers' executors and the x402 settler (the faucet's, when
     * it runs in the cluster): a transaction from one of them is never taken as a payment.
     */
    serviceAccounts: z
      .array(z.string().regex(/^0x[0-9a-fA-F]{40}$/, 'must be a 0x-prefixed 20-byte address') as unknown as z.ZodType<`0x${string}`>)
      .default([]),
  })
  .strict();

/**
 * The environment variable holding the x402 settler's private key (a Kubernetes Secret in the chart), read by the
 * chain worker: the EOA that submits transferWithAuthorization and pays its gas, its nonces owned by the worker.
 */
export const X402_SETTLER_KEY_ENV = 'AGENT_WALLET_X402_SETTLER_KEY';
