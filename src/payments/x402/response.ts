import { encodePaymentResponseHeader } from '@x402/core/http';
import type { Network, SettleResponse } from '@x402/core/types';
import type { Result } from '../../lib/result.ts';
import type { X402Settlement } from './facilitator.ts';
import type { X402Refusal } from './reasons.ts';

export const PAYMENT_RESPONSE_HEADER = 'PAYMENT-RESPONSE';

/**
 * The value of the PAYMENT-RESPONSE header (base64 JSON, x402 v2 SettleResponse) for a settle's outcome: on
 * success the transaction that paid; on a refusal its reason (and the transaction, if one was broadcast).
 */
export function paymentResponseHeader(
  outcome: Result<Pick<X402Settlement, 'payer' | 'transaction' | 'network' | 'amountRaw'>, X402Refusal>,
  context: { network: Network; payer?: string },
): string {
  const response: SettleResponse = outcome.ok
    ? {
        success: true,
        payer: outcome.value.payer,
        transaction: outcome.value.transaction,
        network: outcome.value.network,
        amount: outcome.value.amountRaw,
      }
    : {
        success: false,
        errorReason: outcome.error.reason,
        errorMessage: outcome.error.message,
        payer: context.payer,
        transaction: outcome.error.transaction ?? '',
        network: context.network,
      };
  return encodePaymentResponseHeader(response);
}
