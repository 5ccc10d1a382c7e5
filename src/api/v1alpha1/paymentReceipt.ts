import { z } from 'zod';
import { ChainNameSchema } from '../../config/chains.ts';
import { API_VERSION, ObjectMetaSchema } from './meta.ts';

/**
 * One per payment transaction ever accepted. Its name is derived from (chain, tx hash), so the store's
 * create-if-absent makes a proof single-use without any race: the second create gets AlreadyExists.
 */
export const PaymentReceiptSpecSchema = z.object({
  chain: ChainNameSchema,
  txHash: z.string().regex(/^0x[0-9a-fA-F]{64}$/),
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
