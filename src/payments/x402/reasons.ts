/**
 * Why an x402 payment was refused, in x402's own words (`invalidReason` of verify, `errorReason` of settle), so
 * that a client that speaks x402 recognises them. The facilitator's codes pass through unchanged; the ones
 * named here are those this module produces itself or treats specially.
 */
export const X402_REASON = {
  /** The header is not base64 JSON of an x402 payment with an EIP-3009 payload: answer 400. */
  invalidPayload: 'invalid_payload',
  /** An x402 version other than 2: answer 400. */
  invalidX402Version: 'invalid_x402_version',
  /** The payment answers none of the requirements offered (asset, payTo, amount, EIP-712 domain). */
  invalidPaymentRequirements: 'invalid_payment_requirements',
  /** Nothing was offered on the payment's network. */
  invalidNetwork: 'invalid_network',
  /** Not the `exact` scheme. */
  invalidScheme: 'invalid_scheme',
  nonceAlreadyUsed: 'invalid_exact_evm_nonce_already_used',
  insufficientBalance: 'invalid_exact_evm_insufficient_balance',
  simulationFailed: 'invalid_exact_evm_transaction_simulation_failed',
  notYetValid: 'invalid_exact_evm_payload_authorization_valid_after',
  transactionFailed: 'invalid_exact_evm_transaction_failed',
  /** Broadcast, but no receipt in time: the refusal carries the transaction, and a settle retry reconciles it. */
  settlementPending: 'settlement_pending',
  /** The facilitator threw (typically the chain's RPC did not answer). */
  unexpectedVerifyError: 'unexpected_verify_error',
  unexpectedSettleError: 'unexpected_settle_error',
} as const;

/**
 * Refusals after which the same PAYMENT-SIGNATURE may still succeed: the chain was unreachable, the payer can
 * top up, the authorization's window has not opened yet, or a transaction that reverted or is still pending (a
 * reverted transferWithAuthorization leaves the nonce unused). Every other refusal is final for that
 * signature: a new payment is needed.
 */
const RETRYABLE: ReadonlySet<string> = new Set([
  X402_REASON.insufficientBalance,
  X402_REASON.notYetValid,
  X402_REASON.transactionFailed,
  X402_REASON.settlementPending,
  X402_REASON.unexpectedVerifyError,
  X402_REASON.unexpectedSettleError,
]);

export interface X402Refusal {
  /** An x402 reason code (X402_REASON or any code of @x402/evm's exact facilitator). */
  reason: string;
  /** The why in words, for logs and the answer's `message`. */
  message: string;
  /** The same signature may succeed if presented again (see RETRYABLE). */
  retryable: boolean;
  /** A settlement that was broadcast (settlement_pending, or a transaction that reverted). */
  transaction?: `0x${string}`;
}

export function refusal(reason: string, message: string, transaction?: `0x${string}`): X402Refusal {
  return { reason, message, retryable: RETRYABLE.has(reason), transaction };
}

/** The header itself is unusable: the caller answers 400 rather than 402. */
export const isMalformedPayment = (r: X402Refusal): boolean =>
  r.reason === X402_REASON.invalidPayload || r.reason === X402_REASON.invalidX402Version;
