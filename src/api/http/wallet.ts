import { z } from 'zod';
import { AgentId, CHAIN_DESCRIPTION, ChainOut, ChainSchema, queryParam } from './common.ts';

export const WalletQuerySchema = z.object({
  agent_id: queryParam(AgentId),
  chain: queryParam(ChainSchema.default('ethereum').meta({ description: `${CHAIN_DESCRIPTION} Default: ethereum.` })),
});

/** Spec §2.1. `chain` is an extra. */
export const WalletRecordSchema = z.object({
  agent_id: z.string(),
  smart_wallet_address: z.string(),
  deployed: z.boolean(),
  message: z.string(),
  chain: ChainOut,
});

export const BalanceSchema = z.object({
  agent_id: z.string(),
  chain: ChainOut,
  smart_wallet_address: z.string(),
  deployed: z.boolean(),
  native: z.object({ symbol: z.string(), wei: z.string(), formatted: z.string() }),
  tokens: z.array(
    z.object({
      symbol: z.string(),
      address: z.string(),
      decimals: z.int(),
      raw: z.string(),
      formatted: z.string(),
      accepted_for_payment: z.boolean().optional(),
    }),
  ),
});

export type WalletRecord = z.infer<typeof WalletRecordSchema>;
export type Balance = z.infer<typeof BalanceSchema>;
