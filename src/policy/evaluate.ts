import type { AgentPolicy, Call, PolicyRule } from '../api/v1alpha1/index.ts';
import { applicablePolicies } from './applicable.ts';
import type { PolicyFacts } from './facts.ts';
import { rulesOf, selectorOf, type CompiledRule } from './rules.ts';

/** Which rule of which policy let one call through. */
export interface Acceptance {
  policy: string;
  callIndex: number;
  rule: string;
}

export type PolicyDecision =
  /** Every policy that applies accepts every call (`policies` empty: none applies, the key's mode alone decides). */
  | { allowed: true; policies: string[]; accepted: Acceptance[] }
  | {
      allowed: false;
      /** `agent_suspended`: a kill switch is on. `policy_denied`: a rule rejected, or none accepted. */
      code: 'policy_denied' | 'agent_suspended';
      policy: string;
      /** The rule that rejected; null when no rule accepted (or the policy is outside its validity window). */
      rule: string | null;
      callIndex?: number;
      message: string;
      policies: string[];
    };

/**
 * Judges a request against the policies of its key (docs/policies.md): every policy that applies to its agent must
 * accept every call; within one policy a matching reject wins over any accept and a call no rule accepts is refused.
 * A kill switch on any of them refuses first. Pure: the gateway's early refusal and the controller's decision run
 * the same function on their caches.
 */
export function evaluatePolicies(all: readonly AgentPolicy[], facts: PolicyFacts): PolicyDecision {
  return judge(all, facts, 'calls');
}

/**
 * What can be decided before a protocol action is planned (its calls unknown): a refusal whatever the calls would be
 * — a kill switch, the validity window, a reject on the request alone (chain, action and input), or no accept rule
 * whose request conditions hold — else allowed for now (`accepted` empty): evaluatePolicies decides on the calls.
 */
export function refusedBeforePlanning(all: readonly AgentPolicy[], facts: Omit<PolicyFacts, 'calls'>): PolicyDecision {
  return judge(all, { ...facts, calls: [] }, 'request');
}

function judge(all: readonly AgentPolicy[], facts: PolicyFacts, on: 'calls' | 'request'): PolicyDecision {
  const policies = applicablePolicies(all, facts.apiClient, facts.agentId);
  const names = policies.map((p) => p.metadata.name);
  const deny = (code: 'policy_denied' | 'agent_suspended', policy: string, rule: string | null, message: string, callIndex?: number): PolicyDecision => ({
    allowed: false,
    code,
    policy,
    rule,
    ...(callIndex !== undefined && { callIndex }),
    message,
    policies: names,
  });

  const suspended = policies.find((p) => p.spec.suspended);
  if (suspended) return deny('agent_suspended', suspended.metadata.name, null, `agent ${JSON.stringify(facts.agentId)} is suspended by policy ${suspended.metadata.name}`);

  const accepted: Acceptance[] = [];
  for (const policy of policies) {
    const name = policy.metadata.name;
    const { validFrom, validUntil } = policy.spec;
    const t = facts.now.getTime();
    if ((validFrom !== undefined && t < Date.parse(validFrom)) || (validUntil !== undefined && t >= Date.parse(validUntil))) {
      return deny('policy_denied', name, null, `policy ${name} accepts nothing outside its validity window (${validFrom ?? '…'} to ${validUntil ?? '…'})`);
    }
    if (policy.status?.unreadable !== undefined) {
      return deny('policy_denied', name, null, `policy ${name} as stored cannot be read (${policy.status.unreadable}); it accepts nothing until it is fixed`);
    }
    const rules = rulesOf(policy);
    if (!rules.ok) {
      // Fail closed: a rule the service cannot apply might have been the reject that mattered.
      const first = rules.error[0]!;
      return deny('policy_denied', name, first.rule, `policy ${name} has a rule that cannot be applied (${first.rule}: ${first.message}); it accepts nothing until it is fixed`);
    }
    if (on === 'request') {
      const rejecting = rules.value.find((r) => r.rule.action === 'reject' && !r.judgesCalls && r.matchesRequest(facts));
      if (rejecting) return deny('policy_denied', name, rejecting.rule.name, `${describeAction(facts)} is rejected by rule ${rejecting.rule.name} of policy ${name}`);
      if (!rules.value.some((r) => r.rule.action === 'accept' && r.matchesRequest(facts))) {
        return deny('policy_denied', name, null, `${describeAction(facts)} is accepted by no rule of policy ${name}`);
      }
      continue;
    }
    const wallet = facts.wallet?.toLowerCase();
    for (const [i, call] of facts.calls.entries()) {
      const rejecting = rules.value.find((r) => r.rule.action === 'reject' && r.matches(facts, call));
      if (rejecting) return deny('policy_denied', name, rejecting.rule.name, `call ${i} (${describeCall(call)}) is rejected by rule ${rejecting.rule.name} of policy ${name}${figures([rejecting], facts)}`, i);
      const own = wallet !== undefined && call.target.toLowerCase() === wallet;
      const accepting = rules.value.find((r) => r.rule.action === 'accept' && r.matches(facts, call) && (!own || namesTarget(r.rule, wallet)));
      if (!accepting) {
        const why = own
          ? `is to the agent's own wallet, which policy ${name} accepts only by a rule naming it in targets`
          : `is accepted by no rule of policy ${name}${figures(rules.value.filter((r) => r.rule.action === 'accept'), facts)}`;
        return deny('policy_denied', name, null, `call ${i} (${describeCall(call)}) ${why}`, i);
      }
      accepted.push({ policy: name, callIndex: i, rule: accepting.rule.name });
    }
  }
  return { allowed: true, policies: names, accepted };
}

/** What the outflow and USD conditions of `rules` saw (` (rule x: this execution 150 USD; …)`), or nothing. */
function figures(rules: readonly CompiledRule[], facts: PolicyFacts): string {
  const seen = rules.flatMap((r) => {
    const e = r.explain(facts);
    return e === undefined ? [] : [`${r.rule.name}: ${e}`];
  });
  return seen.length === 0 ? '' : ` (${seen.join('; ')})`;
}

const namesTarget = (rule: PolicyRule, address: string) => rule.targets?.some((t) => t.toLowerCase() === address) === true;

const describeAction = (facts: PolicyFacts) => (facts.action ? `${facts.action.name} on ${facts.chain}` : `a request on ${facts.chain}`);

const describeCall = (call: Call) => {
  const selector = selectorOf(call);
  return `to ${call.target}${selector === '0x' ? '' : `, selector ${selector}`}${call.value === '0' ? '' : `, value ${call.value} wei`}`;
};
