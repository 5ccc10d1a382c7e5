import { z } from 'zod';
import { defineTool } from '../tool.ts';
import { agentFields, callFields } from './inputs.ts';

export const simulate = defineTool({
  name: 'simulate',
  title: 'Simulate a call',
  description:
    "Runs one contract call from the agent's smart wallet without broadcasting anything, and returns the estimated gas and the cost this " +
    'API key would pay. A call that would fail returns an error with its revert reason instead. Use it to check a call before execute; ' +
    'execute also simulates by itself, so this is optional.',
  input: z.object({ ...agentFields, ...callFields }),
  annotations: { readOnlyHint: true, destructiveHint: false, idempotentHint: true, openWorldHint: true },
  async run({ client }, args) {
    const r = await client.simulate({ ...args, chain: args.chain ?? 'ethereum' });
    if (!r.ok) return r;
    return { ok: true, value: r.value, summary: `simulation succeeded: ${r.value.estimated_gas} gas, ${r.value.estimated_cost_usd} USD for this key; nothing was broadcast` };
  },
});
