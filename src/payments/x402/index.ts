/**
 * x402 v2 beside the spec's `X-Payment-Proof`: the service answers a manual-mode 402 with PAYMENT-REQUIRED,
 * and verifies and settles a re-submission's PAYMENT-SIGNATURE itself (scheme `exact`, EIP-3009 tokens), then
 * answers with PAYMENT-RESPONSE. The order a caller follows:
 *
 *   decodePaymentSignature → matchOffer(paymentRequirements(quote)) → facilitator.verify
 *   → claim authorizationClaimName(identity) → facilitator.settle → paymentResponseHeader
 */
export { authorizationsUsedIn } from './authorizationState.ts';
export { authorizationClaimName, authorizationIdentity, type AuthorizationIdentity } from './claim.ts';
export {
  createX402Facilitator,
  type SignedSettlement,
  type X402ChainWorker,
  type X402Facilitator,
  type X402FacilitatorOptions,
  type X402Settlement,
  type X402Verified,
} from './facilitator.ts';
export { matchOffer } from './match.ts';
export { decodePaymentSignature, MAX_PAYMENT_HEADER_LENGTH, PAYMENT_SIGNATURE_HEADER, type Eip3009Authorization, type X402Payment } from './payment.ts';
export { isMalformedPayment, refusal, X402_REASON, type X402Refusal } from './reasons.ts';
export {
  evmNetwork,
  MIN_MAX_TIMEOUT_SECONDS,
  PAYMENT_REQUIRED_HEADER,
  paymentRequired,
  paymentRequiredHeader,
  paymentRequirements,
  X402QuoteSchema,
  type X402Quote,
} from './requirements.ts';
export { PAYMENT_RESPONSE_HEADER, paymentResponseHeader } from './response.ts';
