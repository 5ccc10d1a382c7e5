import { z } from 'zod';
import { defineTool } from '../tool.ts';
import { agentFields } from './inputs.ts';

export const getBalance = defineTool({
  name: 'get_balance',
  title: "Get the agent's wallet balances",
  description:
    "Returns the native coin and token balances of the agent's smart wallet on one chain, each raw (smallest unit) and formatted, and " +
    'whether each token is accepted for payment. Use it before an execute that spends tokens, or to check that a payment or a faucet drip arrived.',
  input: z.object(agentFields),
  annotations: { readOnlyHint: true, destructiveHint: false, idempotentHint: true, openWorldHint: true },
  async run({ client }, args) {
    const r = await client.balance(args.agent_id, args.chain);
    if (!r.ok) return r;
    const b = r.value;
    const tokens = b.tokens.map((t) => `${t.formatted} ${t.symbol}`).join(', ');
    return { ok: true, value: b, summary: `${b.smart_wallet_address} on ${b.chain}: ${b.native.formatted} ${b.native.symbol}${tokens ? `, ${tokens}` : ''}` };
  },
});
