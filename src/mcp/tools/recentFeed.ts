import { z } from 'zod';
import { LIMITS } from '../../api/http/index.ts';
import { defineTool } from '../tool.ts';

export const recentFeed = defineTool({
  name: 'recent_feed',
  title: 'Recent executions (public feed)',
  description:
    "Returns the service's newest executions of all its users, newest first: status, chain, tx_hash, number of calls and times, with nothing " +
    'that identifies an agent or a key. Use it to see whether the service is moving requests to confirmed right now.',
  input: z.object({
    limit: z.int().min(1).max(LIMITS.feedMax).optional().meta({ description: `How many (1 to ${LIMITS.feedMax}; default ${LIMITS.feedDefault})` }),
  }),
  annotations: { readOnlyHint: true, destructiveHint: false, idempotentHint: true, openWorldHint: true },
  async run({ client }, args) {
    const r = await client.feed(args.limit);
    if (!r.ok) return r;
    const counts = new Map<string, number>();
    for (const e of r.value.executions) counts.set(e.status, (counts.get(e.status) ?? 0) + 1);
    return { ok: true, value: r.value, summary: `${r.value.executions.length} recent executions: ${[...counts].map(([s, n]) => `${n} ${s}`).join(', ') || 'none'}` };
  },
});
