import { isAddressEqual, type Address, type Hex } from 'viem';
import type { PaymentQuote, PaymentRecord } from '../api/v1alpha1/index.ts';
import type { ChainWorker, TransactionReceiptInfo } from '../chain/types.ts';
import { transfersOf } from './proof.ts';

/**
 * A payment verified earlier, looked at again: the request's inclusion left the chain (a chain that lost blocks,
 * a reset), and the block that held the payment's own transaction may be gone with it. Before the request's
 * operation is sent again, its payment must still be on chain, or the request would execute for free.
 *   held       the transaction is on chain, succeeded, and still moves what was verified (or nothing to check:
 *              sponsored, or the auto mode's transfer, which rides in the operation itself)
 *   not_final  on chain, not deep enough yet: look again later
 *   lost       gone, reverted, or it no longer pays: the request must not be sent again
 */
export type PaymentRecheck = { kind: 'held' } | { kind: 'not_final'; message: string } | { kind: 'lost'; message: string };

/** The sum of `token` Transfers from `payer` to `recipient` in a receipt. */
function paidIn(receipt: TransactionReceiptInfo, token: Address, payer: Address, recipient: Address): bigint {
  return transfersOf(receipt)
    .filter((t) => isAddressEqual(t.token, token) && isAddressEqual(t.from, payer) && isAddressEqual(t.to, recipient))
    .reduce((sum, t) => sum + t.value, 0n);
}

/**
 * Checks `paid` (status.payment.paid) against the chain again, with the quote it paid (for the token's address
 * and the recipient). A focused re-check of what verification claimed, not a new verification: the claim
 * (PaymentReceipt) stays, so the same transaction can never pay another request.
 */
export async function recheckPayment(
  paid: PaymentRecord | undefined,
  quote: PaymentQuote | undefined,
  worker: Pick<ChainWorker, 'getTransactionReceipt'>,
  requiredConfirmations: number,
): Promise<PaymentRecheck> {
  if (paid === undefined || paid.method === 'auto') return { kind: 'held' };
  if (paid.txHash === undefined) return { kind: 'lost', message: `the ${paid.method} payment has no transaction recorded to check` };
  const receipt = await worker.getTransactionReceipt(paid.txHash as Hex);
  if (!receipt) return { kind: 'lost', message: `the payment's transaction ${paid.txHash} is no longer on chain` };
  if (receipt.status !== 'success') return { kind: 'lost', message: `the payment's transaction ${paid.txHash} now reverts` };
  const token = quote?.tokens.find((t) => t.symbol === paid.token);
  if (quote && token) {
    const moved = paidIn(receipt, token.address as Address, paid.payer as Address, quote.recipient as Address);
    if (moved < BigInt(paid.amountRaw)) {
      return { kind: 'lost', message: `the payment's transaction ${paid.txHash} now moves ${moved} raw ${paid.token} to the treasury, not the ${paid.amountRaw} verified` };
    }
  }
  if (Number(receipt.confirmations) < requiredConfirmations) {
    return { kind: 'not_final', message: `the payment's transaction ${paid.txHash} has ${receipt.confirmations} of ${requiredConfirmations} confirmations` };
  }
  return { kind: 'held' };
}
