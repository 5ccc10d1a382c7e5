import { z } from 'zod';
import { ChainNameSchema } from '../../config/chains.ts';
import { API_VERSION, ObjectMetaSchema } from './meta.ts';

/**
 * One per payment ever accepted: its name is what makes the payment single-use, created if absent before the
 * request it pays for is queued (the second create of the name gets AlreadyExists). A proof's receipt is named
 * after (chain, tx hash); an x402 authorization's after (chain, token, signer, nonce), claimed before it is
 * settled, so its tx hash comes later.
 */
export const PaymentReceiptSpecSchema = z.object({
  chain: ChainNameSchema,
  method: z.enum(['proof', 'x402']).default('proof'),
  txHash: z.string().regex(/^0x[0-9a-fA-F]{64}$/).optional(),
  token: z.string(),
  payer: z.string(),
  amountRaw: z.string(),
  apiClient: z.string(),
  requestId: z.string(),
});

export const PaymentReceiptSchema = z.object({
  apiVersion: z.literal(API_VERSION),
  kind: z.literal('PaymentReceipt'),
  metadata: ObjectMetaSchema,
  spec: PaymentReceiptSpecSchema,
  status: z.object({}).passthrough().optional(),
});
export type PaymentReceipt = z.infer<typeof PaymentReceiptSchema>;

export const paymentReceiptName = (chain: string, txHash: string): string => `${chain}-${txHash.toLowerCase().slice(2)}`;
