import { z } from 'zod';
import { ChainNameSchema } from '../../config/chains.ts';
import { API_VERSION, ObjectMetaSchema } from './meta.ts';

/**
 * One per payment ever taken, a claim: its name is what makes the payment single-use, created if absent before
 * the request it pays for is queued (the second create of the name gets AlreadyExists). The names, one per thing
 * a payment spends (claimNames below):
 * - a transfer a proof presents: (chain, tx hash, position of its first Transfer log in the transaction);
 * - a transaction the service sent to pay (an x402 settlement): (chain, tx hash), written when it is signed,
 *   before it is sent; the receipts of earlier versions, one per proof's transaction, have this name too;
 * - an auto-mode UserOperation, whose calls carry the fee: (chain, operation hash), written when it is signed;
 * - an x402 authorization: (chain, token, signer, nonce), claimed before it is settled;
 * - the credit of a paid request that never executed: (that request), claimed by the one request it pays.
 */
export const PaymentReceiptSpecSchema = z.object({
  chain: ChainNameSchema,
  method: z.enum(['proof', 'x402', 'auto', 'credit']).default('proof'),
  txHash: z.string().regex(/^0x[0-9a-fA-F]{64}$/).optional(),
  /** A transfer's claim: the position of its first Transfer log in the transaction's logs. */
  logIndex: z.number().int().min(0).optional(),
  /** An auto payment's claim: the UserOperation whose calls carry the fee. */
  userOpHash: z.string().regex(/^0x[0-9a-fA-F]{64}$/).optional(),
  token: z.string(),
  payer: z.string(),
  amountRaw: z.string(),
  apiClient: z.string(),
  requestId: z.string(),
  /**
   * The uid of the request it paid: a request made again under the same name (an Idempotency-Key used again once
   * the first request was archived) is another request, and is not paid by what paid the first.
   */
  requestUid: z.string().optional(),
});

export const PaymentReceiptSchema = z.object({
  apiVersion: z.literal(API_VERSION),
  kind: z.literal('PaymentReceipt'),
  metadata: ObjectMetaSchema,
  spec: PaymentReceiptSpecSchema,
  status: z.object({}).passthrough().optional(),
});
export type PaymentReceipt = z.infer<typeof PaymentReceiptSchema>;

const hex = (h: string): string => h.toLowerCase().slice(2);
/** The claim of a whole transaction: an x402 settlement (and a proof's, before claims were per transfer). */
export const transactionClaimName = (chain: string, txHash: string): string => `${chain}-${hex(txHash)}`;
/** The claim of one transfer: the transaction and the position of its first Transfer log in it. */
export const transferClaimName = (chain: string, txHash: string, logIndex: number): string => `${chain}-${hex(txHash)}-${logIndex}`;
/** The claim of the credit a paid request that never executed left: one later request uses it. */
export const creditClaimName = (requestName: string): string => `credit-${requestName}`;
/** The claim of an auto-mode operation's fee. */
export const operationClaimName = (chain: string, userOpHash: string): string => `${chain}-op-${hex(userOpHash)}`;
