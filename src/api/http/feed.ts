import { z } from 'zod';
import { ChainOut, LIMITS, queryParam } from './common.ts';
import { StatusSchema } from './status.ts';

const LIMIT_MESSAGE = `must be an integer between 1 and ${LIMITS.feedMax}`;
export const FeedQuerySchema = z.object({
  // Query values are text: digits become a number, anything else stays text and fails as "not an integer".
  limit: queryParam(
    z.preprocess(
      (v) => (typeof v === 'string' && /^[0-9]{1,15}$/.test(v) ? Number(v) : v),
      z
        .int({ error: LIMIT_MESSAGE })
        .min(1, LIMIT_MESSAGE)
        .max(LIMITS.feedMax, LIMIT_MESSAGE)
        .default(LIMITS.feedDefault)
        .meta({ description: `How many executions, newest first: 1 to ${LIMITS.feedMax}, default ${LIMITS.feedDefault}` }),
    ),
  ),
});

/** One public feed entry: deliberately nothing that identifies a key, an agent, a wallet or a callback. */
export const FeedSchema = z.object({
  executions: z.array(
    z.object({
      status: StatusSchema,
      chain: ChainOut,
      tx_hash: z.string().nullable(),
      calls: z.int(),
      created_at: z.string(),
      updated_at: z.string(),
    }),
  ),
});
export type Feed = z.infer<typeof FeedSchema>;
