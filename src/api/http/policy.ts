import { z } from 'zod';
import { AgentId, queryParam } from './common.ts';

/** GET /policy: whose policies to show (the key's own agent; an agent-scoped key only its own). */
export const PolicyQuerySchema = z.object({ agent_id: queryParam(AgentId) });

const AgentsSchema = z
  .object({ match: z.enum(['exact', 'prefix']), agent_id: z.string() })
  .meta({ description: 'The agent ids it governs: one id (exact) or every id starting with agent_id (prefix).' });

/** One budget of a policy, with what its window held for the agent when the controller last summed it. */
export const BudgetViewSchema = z.object({
  policy: z.string(),
  name: z.string(),
  window: z.string().meta({ description: 'The rolling window: `30m`, `24h`, `7d`.' }),
  usd: z.string().nullable().meta({ description: 'The most the window may cost, in USD; null: no USD limit.' }),
  count: z.int().nullable().meta({ description: 'The most executions the window may hold; null: no count limit.' }),
  spent: z
    .object({
      usd: z.string(),
      count: z.int(),
      remaining_usd: z.string().nullable(),
      remaining_count: z.int().nullable(),
      as_of: z.string(),
    })
    .nullable()
    .meta({
      description:
        'What the window held for this agent (the whole key for the key-level policy) when last summed, every few seconds: ' +
        'the controller decides on its own live figures. null: not summed yet.',
    }),
});
export type BudgetView = z.infer<typeof BudgetViewSchema>;

/** One policy that applies to the agent, as its operator wrote it. */
export const PolicyViewSchema = z.object({
  name: z.string(),
  applies_to: AgentsSchema.nullable().meta({ description: 'null: every agent of the key (the key-level policy, which bounds the others).' }),
  suspended: z.boolean().meta({ description: 'The kill switch: while true, every request is refused with agent_suspended.' }),
  valid_from: z.string().nullable(),
  valid_until: z.string().nullable(),
  rules: z
    .array(z.looseObject({ name: z.string(), action: z.enum(['accept', 'reject']) }))
    .meta({ description: 'Its rules as the operator wrote them (docs/policies.md lists the conditions).' }),
  budgets: z.array(BudgetViewSchema).meta({ description: 'Its budgets (docs/policies.md "Budgets"), with their windows as last summed.' }),
});

export const PolicyListSchema = z.object({
  agent_id: z.string(),
  policies: z.array(PolicyViewSchema).meta({
    description: 'Every policy that applies to the agent, in the order they are judged; empty: no policy, the key allows what its payment mode allows.',
  }),
});

/** POST /policy/evaluate's answer: what the policies would decide about the body, nothing created. */
/** One outflow or allowance of a dry-run's valuation (src/policy/valuation.ts). */
const ValuationLineSchema = z.object({
  what: z.enum(['outflow', 'approval']),
  asset: z.string().meta({ description: 'The token address, or `native`.' }),
  amount: z.string().nullable().meta({ description: 'Base units as a decimal string; null for an operator approval (every token).' }),
  to: z.string().meta({ description: 'The recipient of an outflow, the spender of an approval.' }),
  call_index: z.int().nullable(),
  usd: z.string().nullable().meta({ description: 'Its worth in USD (a decimal string), or null when unbounded or unpriced.' }),
  unbounded: z.boolean().meta({ description: 'An allowance without a bound of a priced token: over any USD limit.' }),
  unpriced: z.string().nullable().meta({ description: 'Why it has no price, or null.' }),
});

const PolicyValuationSchema = z.object({
  outflows_known: z.boolean().meta({ description: 'False when the chain could not trace the outflows (`unavailable` says why).' }),
  unavailable: z.string().nullable(),
  total_usd: z
    .string()
    .nullable()
    .meta({ description: 'Every line counted (no spender allow-listed), in USD; null when a line is unpriced or the outflows are unknown. A USD rule leaves out the allowances to its `approvalSpenders`.' }),
  unbounded: z.boolean(),
  lines: z.array(ValuationLineSchema),
});

export const PolicyEvaluationSchema = z.object({
  agent_id: z.string(),
  decision: z.enum(['allow', 'deny']),
  error: z
    .enum(['policy_denied', 'agent_suspended'])
    .nullable()
    .meta({ description: 'The error code POST /execute would answer with (403), or null when allowed.' }),
  policy: z.string().nullable().meta({ description: 'The policy that refused, or null.' }),
  rule: z.string().nullable().meta({ description: 'The rule that refused; null when no rule accepted (or when allowed).' }),
  call_index: z.int().nullable(),
  reason: z.string(),
  policies: z.array(z.string()).meta({ description: 'The policies that apply, in the order they were judged.' }),
  accepted: z
    .array(z.object({ policy: z.string(), call_index: z.int(), rule: z.string() }))
    .meta({ description: 'When allowed: the rule of each policy that accepted each call.' }),
  valuation: PolicyValuationSchema.nullable().meta({
    description: 'What the simulated execution moves out of the wallet and its USD worth; null when no outflow or USD rule applies (nothing was simulated).',
  }),
  budgets: z.array(BudgetViewSchema).meta({
    description: 'The budgets that bound the agent, with what their windows held when last summed: a dry run does not reserve, and the controller decides at admission.',
  }),
});

export type PolicyList = z.infer<typeof PolicyListSchema>;
export type PolicyEvaluation = z.infer<typeof PolicyEvaluationSchema>;
