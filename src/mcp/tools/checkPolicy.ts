import { z } from 'zod';
import { defineTool } from '../tool.ts';
import { agentFields, callFields } from './inputs.ts';

/** The agent's own policies, read only: without a call, what governs it; with one, whether it would be accepted. */
export const checkPolicy = defineTool({
  name: 'check_policy',
  title: "Check the agent's policy",
  description:
    "Without a call: the operator's policies for the agent (rules, budgets, kill switch). With one: whether execute would accept it, and the rule that decides. Nothing is sent.",
  input: z.object({ ...agentFields, ...callFields, target_contract: callFields.target_contract.optional(), calldata: callFields.calldata.optional() }),
  annotations: { readOnlyHint: true, destructiveHint: false, idempotentHint: true, openWorldHint: true },
  async run({ client }, args) {
    if (args.target_contract === undefined || args.calldata === undefined) {
      const r = await client.policy(args.agent_id);
      if (!r.ok) return r;
      const names = r.value.policies.map((p) => `${p.name}${p.suspended ? ' (suspended)' : ''}`);
      return { ok: true, value: r.value, summary: names.length ? `policies: ${names.join(', ')}` : 'no policy: the key allows what its payment mode allows' };
    }
    const { target_contract, calldata, value, agent_id, chain } = args;
    const r = await client.evaluatePolicy({ agent_id, chain: chain ?? 'ethereum', target_contract, calldata, value });
    if (!r.ok) return r;
    return { ok: true, value: r.value, summary: `${r.value.decision}: ${r.value.reason}` };
  },
});
