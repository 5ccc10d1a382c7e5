import { z } from 'zod';
import { defineTool } from '../tool.ts';
import { agentFields } from './inputs.ts';

export const getWallet = defineTool({
  name: 'get_wallet',
  title: "Get the agent's smart wallet",
  description:
    "Returns the smart wallet address of an agent on a chain. The same agent_id always maps to the same address under this API key; " +
    'no registration is needed. Use it to learn where to send tokens for the agent (deployed=false is normal: the wallet is deployed by its ' +
    'first execution, and funds sent before then are safe).',
  input: z.object(agentFields),
  annotations: { readOnlyHint: true, destructiveHint: false, idempotentHint: true, openWorldHint: true },
  async run({ client }, args) {
    const r = await client.wallet(args.agent_id, args.chain);
    if (!r.ok) return r;
    return { ok: true, value: r.value, summary: `${r.value.agent_id} on ${r.value.chain}: ${r.value.smart_wallet_address}${r.value.deployed ? '' : ' (not deployed yet)'}` };
  },
});
