import { z } from 'zod';
import { ChainOut } from './common.ts';

export const HealthSchema = z.object({
  status: z.enum(['ok', 'degraded']),
  version: z.string(),
  uptime_seconds: z.number(),
  time: z.string(),
  store: z.object({ synced: z.boolean() }),
  chains: z.array(
    z.object({
      chain: ChainOut,
      network: z.string(),
      chain_id: z.int(),
      reachable: z.boolean().nullable(),
      block_number: z.string().nullable(),
      latency_ms: z.number().nullable(),
    }),
  ),
});
export type Health = z.infer<typeof HealthSchema>;
