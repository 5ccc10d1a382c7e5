import { z } from 'zod';
import { ChainOut } from './common.ts';

export const HealthSchema = z.object({
  status: z.enum(['ok', 'degraded']),
  version: z.string(),
  uptime_seconds: z.number(),
  time: z.string(),
  store: z.object({
    synced: z.boolean().meta({ description: "The gateway's view of the requests is in sync with the store" }),
    writable: z.boolean().meta({ description: 'The store accepts writes; false: executions cannot be accepted (503)' }),
    reason: z.string().optional().meta({ description: 'Why the store cannot write, e.g. a full disk' }),
    since: z.string().optional().meta({ description: 'When writes started failing (ISO 8601)' }),
  }),
  chains: z.array(
    z.object({
      chain: ChainOut,
      network: z.string(),
      chain_id: z.int(),
      reachable: z.boolean().nullable(),
      block_number: z.string().nullable(),
      latency_ms: z.number().nullable(),
      history: z.enum(['consistent', 'mismatch', 'unknown']).meta({
        description:
          'Whether the chain still holds the newest transaction the service recorded as confirmed on it (in the store, and the ' +
          'newest archived one): mismatch when the chain lost history (a devnet reset, a reorg deeper than the confirmation ' +
          'depth) until the controller has repaired the requests in the store, and for as long as archived requests claim ' +
          'what the chain no longer has; unknown before any inclusion',
      }),
      history_detail: z.string().nullable().meta({ description: 'What does not match, when history is mismatch' }),
    }),
  ),
  protocols: z
    .array(
      z.object({
        family: z.string().meta({ description: 'The family’s slug, e.g. `perp-v2`' }),
        chain: z.string(),
        available: z.boolean(),
        reason: z.string().nullable().meta({ description: 'Why its endpoints answer 503 protocol_unavailable (e.g. a stale contract address)' }),
      }),
    )
    .meta({
      description:
        'The protocol families that check their deployment (perp-v2: its ExchangeRouter still a CONTROLLER of GMX’s RoleStore), ' +
        'each chain that configures one; one unavailable makes the status `degraded`, and only its endpoints refuse',
    }),
});
export type Health = z.infer<typeof HealthSchema>;
