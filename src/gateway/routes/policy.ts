import type { FastifyPluginAsyncZod } from 'fastify-type-provider-zod';
import { callsOf, ExecuteBodySchema, PolicyEvaluationSchema, PolicyListSchema, PolicyQuerySchema, type PolicyEvaluation, type PolicyList } from '../../api/http/index.ts';
import type { AgentPolicy } from '../../api/v1alpha1/index.ts';
import { applicablePolicies, evaluatePolicies, formatMicroUsd, policiesNeedOutflows, totalOf, valueExecution, type PolicyDecision, type Valuation } from '../../policy/index.ts';
import { errorResponses, jsonResponse } from '../../http/openapi.ts';
import { clientOf } from '../auth.ts';
import { workerFor, type GatewayContext } from '../context.ts';
import { fieldError } from '../../http/errors.ts';
import { budgetViews } from '../policyBudgets.ts';

/**
 * The caller's own policies, read only: an API key reads the policies that govern one of its agents and dry-runs
 * a body against them. Nothing here writes a policy: only an operator does (docs/policies.md).
 */
export function policyRoutes(ctx: GatewayContext): FastifyPluginAsyncZod {
  return async (app) => {
    app.get(
      '/policy',
      {
        schema: {
          tags: ['policy'],
          operationId: 'getPolicy',
          summary: 'The policies that govern one of the key’s agents',
          security: [{ apiKey: [] }],
          querystring: PolicyQuerySchema,
          response: { 200: jsonResponse('The policies, in the order they are judged', PolicyListSchema), ...errorResponses(400, 401, 403, 429, 500) },
        },
      },
      async (request): Promise<PolicyList> => {
        const client = clientOf(request);
        const agentId = request.query.agent_id;
        return { agent_id: agentId, policies: applicablePolicies(ctx.policies.of(client.metadata.name), client.metadata.name, agentId).map((p) => present(p, agentId)) };
      },
    );

    app.post(
      '/policy/evaluate',
      {
        schema: {
          tags: ['policy'],
          operationId: 'evaluatePolicy',
          summary: 'Dry-run an execute body against the agent’s policies: the decision and the deciding rule',
          description:
            'Judges the body POST /execute would take against the policies of its agent, as the service would now, without ' +
            'creating or paying anything. When an outflow or USD rule applies, the calls are simulated (outflows traced) and ' +
            'valued, as the controller does, and the valuation is in the answer. A deny here is the 403 POST /execute would answer with.',
          security: [{ apiKey: [] }],
          body: ExecuteBodySchema,
          response: { 200: jsonResponse('The decision', PolicyEvaluationSchema), ...errorResponses(400, 401, 403, 413, 415, 429, 500, 503) },
        },
      },
      async (request): Promise<PolicyEvaluation> => {
        const client = clientOf(request);
        const body = request.body;
        const calls = callsOf(body);
        // Judged as POST /execute would take it: within the key's batch limit.
        const maxCalls = client.spec.limits.maxBatchCalls;
        if (calls.length > maxCalls) throw fieldError('batch_too_large', 'batch_calls', `has ${calls.length} calls; this API key allows at most ${maxCalls}`);
        const policies = ctx.policies.of(client.metadata.name);
        // A call to the agent's own wallet is judged apart (src/policy): the wallet is resolved only when a policy applies.
        const ref = { apiClient: client.metadata.name, agentId: body.agent_id };
        const wallet = policies.length === 0 ? undefined : (await workerFor(ctx, body.chain).resolveWallet(ref)).address;
        const now = new Date();
        // Outflow and USD rules judge the simulated execution, as the controller does (admission/policy.ts).
        let execution: Valuation | undefined;
        if (policiesNeedOutflows(applicablePolicies(policies, ref.apiClient, ref.agentId))) {
          const sim = await workerFor(ctx, body.chain).simulate(ref, calls, { outflows: true });
          const traced = sim.ok ? sim.value : { outflowsUnavailable: { message: `the simulation failed: ${sim.error.message}` } };
          execution = await valueExecution(ctx.prices.get(body.chain), traced, calls, now);
        }
        const d = evaluatePolicies(policies, { ...ref, chain: body.chain, calls, now, wallet, execution });
        const budgets = applicablePolicies(policies, client.metadata.name, body.agent_id).flatMap((p) => budgetViews(p, body.agent_id));
        return { ...presentDecision(body.agent_id, d), valuation: execution ? presentValuation(execution) : null, budgets };
      },
    );
  };
}

function present(p: AgentPolicy, agentId: string): PolicyList['policies'][number] {
  const { agents, suspended, validFrom, validUntil, rules } = p.spec;
  return {
    name: p.metadata.name,
    applies_to: agents ? { match: agents.match, agent_id: agents.agentId } : null,
    suspended,
    valid_from: validFrom ?? null,
    valid_until: validUntil ?? null,
    rules,
    budgets: budgetViews(p, agentId),
  };
}

function presentValuation(v: Valuation): NonNullable<PolicyEvaluation['valuation']> {
  const total = totalOf(v);
  return {
    outflows_known: v.outflows !== undefined,
    unavailable: v.unavailable ?? null,
    total_usd: total.kind === 'priced' ? formatMicroUsd(total.microUsd) : null,
    unbounded: total.kind === 'priced' && total.unbounded,
    lines: v.lines.map((l) => ({
      what: l.what,
      asset: l.asset,
      amount: l.amount === undefined ? null : l.amount.toString(),
      to: l.to,
      call_index: l.callIndex ?? null,
      usd: l.value.kind === 'priced' ? formatMicroUsd(l.value.microUsd) : null,
      unbounded: l.value.kind === 'unbounded',
      unpriced: l.value.kind === 'unpriced' ? l.value.reason : null,
    })),
  };
}

function presentDecision(agentId: string, d: PolicyDecision): Omit<PolicyEvaluation, 'valuation' | 'budgets'> {
  if (d.allowed) {
    const reason = d.policies.length === 0 ? 'no policy applies: the key allows what its payment mode allows' : `accepted by ${d.policies.join(', ')}`;
    return {
      agent_id: agentId,
      decision: 'allow',
      error: null,
      policy: null,
      rule: null,
      call_index: null,
      reason,
      policies: d.policies,
      accepted: d.accepted.map((a) => ({ policy: a.policy, call_index: a.callIndex, rule: a.rule })),
    };
  }
  return {
    agent_id: agentId,
    decision: 'deny',
    error: d.code,
    policy: d.policy,
    rule: d.rule,
    call_index: d.callIndex ?? null,
    reason: d.message,
    policies: d.policies,
    accepted: [],
  };
}
