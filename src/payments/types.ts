import type { Address } from 'viem';
import type { Call, ExecutionRequest, Failure, PaymentMode, PaymentQuote, PaymentRecord, PaymentRejection } from '../api/v1alpha1/index.ts';
import type { ChainWorker, SimulationResult } from '../chain/types.ts';
import type { TokenConfig } from '../config/chainConfig.ts';
import type { ChainName } from '../config/chains.ts';
import type { HeldAmounts } from './uniqueAmounts.ts';
import type { PaymentRecheck } from './recheck.ts';
import type { PaymentVerdict } from './verify.ts';

/**
 * The payment seam between the execution reconciler and payment handling (spec §2.6). The reconciler asks the
 * policy of the request's mode at two moments, and writes what it answers; the policy never writes the
 * ExecutionRequest itself (it may create PaymentReceipts, the single-use claims):
 *
 * - `admit`, after a successful simulation of a new request: go on and sign (`satisfied`, possibly with calls to
 *   add to the operation: the auto mode's transfer), wait for a payment (`required`, with the quote), take a
 *   payment that came with the request (`verified`: phase PaymentVerified), or `refused`.
 * - `verify`, when a payment is attached to a request awaiting one (a re-submission with X-Payment-Proof or
 *   PAYMENT-SIGNATURE changes the spec): `verified` (claimed), `rejected` with the reason (the request keeps
 *   waiting; the gateway answers 402 payment_verification_failed), or `expired` (quote again: a fresh 402).
 */
export type Admission =
  /** Go on and sign; `calls` are added to the operation (the auto transfer), `paid` records what pays. */
  | { kind: 'satisfied'; reason: string; costUsd: number; calls?: Call[]; quote?: PaymentQuote; paid?: PaymentRecord }
  /** Wait for a payment: answer 402 with this quote (and why the payment that came with the request was refused). */
  | { kind: 'required'; quote: PaymentQuote; rejection?: Omit<PaymentRejection, 'observedGeneration'> }
  /** A payment that came with the request is verified and claimed: phase PaymentVerified, then sign. */
  | { kind: 'verified'; quote: PaymentQuote; paid: PaymentRecord }
  | { kind: 'refused'; failure: Failure };

/** What a chain takes as payment and where it goes: from the chain's configuration. */
export interface ChainPaymentTerms {
  chain: ChainName;
  chainId: number;
  /** The chain's EntryPoint: payment verification finds the operation a bundle's transfer belongs to by its events. */
  entryPoint: Address;
  treasury: Address;
  tokens: readonly TokenConfig[];
  /** USD per native coin, to price gas. */
  nativeUsdPrice: number;
  /** Confirmations a payment transaction needs before it counts. */
  paymentConfirmations: number;
}

export interface PaymentSettings {
  /** The platform fee per execution in USD, under the manual mode (an API client may carry its own). */
  platformFeeUsd: number;
  /** How long a quote holds; a payment for an expired quote is answered with a fresh 402. */
  quoteTtlSeconds: number;
  /**
   * How long after its quote expired an unpaid request still waits for a payment on its way, and the quote's
   * amounts stay held for it (a transfer mined until then still pays it).
   */
  graceSeconds: number;
  /**
   * The service's sending accounts besides the chain workers' executors and the x402 settler (the faucet's): a
   * transaction one of them sent is never taken as a payment.
   */
  serviceAccounts: readonly Address[];
}

export interface PaymentContext {
  request: ExecutionRequest;
  worker: ChainWorker;
  now: Date;
  /** The amounts open quotes hold: a 402's quote asks for others (uniqueAmounts.ts). */
  amounts: HeldAmounts;
  /**
   * The auto-mode fees of the request's wallet that are signed and not yet final (other requests'): its balance
   * is spoken for by that much, so the auto mode counts them before it takes another fee from it.
   */
  feesInFlight?: readonly AutoFee[] | undefined;
  /** Credits of the request's key and agent not yet used (oldest first): paid requests that never executed. */
  credits?: readonly Credit[] | undefined;
}

/** A credit: the request a payment was made for, which then failed without executing, and what was paid. */
export interface Credit {
  request: string;
  amountUsd: number;
  expiresAt: string;
  paid: PaymentRecord;
}

/** A fee the auto mode takes from a wallet: the token's symbol and raw amount. */
export interface AutoFee {
  token: string;
  amountRaw: string;
}

export interface PaymentPolicy {
  readonly mode: PaymentMode;
  /** A new request, just simulated. */
  admit(ctx: PaymentContext & { simulation: SimulationResult }): Promise<Admission>;
  /** A payment attached to a request awaiting one, judged against its quotes (the current one first). */
  verify(ctx: PaymentContext, quotes: readonly PaymentQuote[]): Promise<PaymentVerdict>;
  /**
   * The payment recorded on a request whose inclusion left the chain, looked at again before its operation is
   * sent again (recheck.ts): held, not final yet, or lost (then the request fails: it is not executed for free).
   */
  recheck(ctx: Pick<PaymentContext, 'request' | 'worker'>, paid: PaymentRecord): Promise<PaymentRecheck>;
  /**
   * The 402 of this mode when it cannot take the payment itself: the auto mode's fee no longer covered when the
   * operation is signed (another request of the wallet took the balance). `satisfied` for a mode that takes none.
   */
  required(ctx: PaymentContext & { simulation: SimulationResult }): Promise<Admission>;
}

export type PaymentPolicies = Readonly<Record<PaymentMode, PaymentPolicy>>;
