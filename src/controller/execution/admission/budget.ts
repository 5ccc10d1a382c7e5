import type { Call, ExecutionRequest, SpendReservation } from '../../../api/v1alpha1/index.ts';
import { budgetsFor, longestWindowMs, type BudgetRefusal, type BudgetScope } from '../../../policy/budgets.ts';
import { weiToMicroUsd } from '../../../policy/usd.ts';
import { totalOf, type Valuation } from '../../../policy/index.ts';
import { usdToMicro } from '../../../payments/pricing.ts';
import type { Reconciling } from '../context.ts';
import { fail } from '../status.ts';
import type { AdmissionStep } from './types.ts';

/**
 * The budgets of the request's key and agent (docs/policies.md "Budgets"), after the policies accepted its calls
 * and before any payment is asked or anything signed: its most cost (gas at the maximum fee and limits, plus what
 * its calls send) must fit every window, and is then held for it in the spend ledger and written on the request
 * itself with admission's next status write, so a restart finds it. A request admitted again (a new quote, a
 * re-plan at signing) replaces its own.
 */
export const budgetStep: AdmissionStep = {
  name: 'budget',
  condition: 'PolicyAllowed',
  async run(r, { req, t, calls }, found) {
    const held = holdBudget(r, req, calls, found.simulation!.estimatedCostWei, found.value, t);
    if (held.kind === 'refused') return { kind: 'stop', result: await failByBudget(r, req, held.refusal) };
    // Written with the status admission's outcome writes (waiting for a payment, paid, or signed: phases/sign.ts),
    // before anything is sent: a crash before that write finds nothing held and admits the request afresh, and
    // nothing of it was broadcast. Until the cache shows it, the ledger holds it (spendLedger.ts).
    return { kind: 'pass', found: held.kind === 'held' ? { spend: held.spend } : {} };
  },
};

export type BudgetHold = { kind: 'none' } | { kind: 'held'; spend: SpendReservation } | { kind: 'refused'; refusal: BudgetRefusal };

/**
 * Checks and holds `req`'s most cost in every budget that bounds it, at `t`, replacing its own earlier hold:
 * synchronous, so the budget step and the last look before signing (phases/sign.ts) both decide with nothing in
 * between. `costWei` is the gas at the maximum fee of the simulation the calls will be signed from; `value`, the
 * policy step's valuation of what leaves the wallet (needed under a USD budget, which refuses without it).
 */
export function holdBudget(r: Reconciling, req: ExecutionRequest, calls: readonly Call[], costWei: bigint, value: Valuation | undefined, t: Date): BudgetHold {
  const ledger = r.deps.spendLedger;
  const scopes = ledger ? budgetsFor(r.deps.policiesFor?.(req.spec.apiClient) ?? [], req.spec.apiClient, req.spec.agentId) : [];
  if (!ledger || scopes.length === 0) return { kind: 'none' };
  const refused = (scope: BudgetScope, message: string): BudgetHold => ({
    kind: 'refused',
    refusal: { policy: scope.policy, budget: scope.budget.name, spent: { microUsd: 0n, count: 0 }, costMicroUsd: 0n, message },
  });
  const price = r.deps.nativeUsdPrice?.(req.spec.chain);
  if (price === undefined) return refused(scopes[0]!, `budget ${scopes[0]!.budget.name} of policy ${scopes[0]!.policy} cannot be judged: the native coin of ${req.spec.chain} has no price`);
  const nativeUsdMicro = usdToMicro(price);
  // What leaves the wallet: under a USD budget, the policy step's valuation of the traced outflows (tokens and
  // native value) and of the allowances granted, fail closed when any of it is unpriced or untraced; under count
  // budgets alone nothing is traced, and the calls' native value stands for it.
  const usdScope = scopes.find((s) => s.limitMicroUsd !== undefined);
  let outflowsMicroUsd = weiToMicroUsd(nativeValueOf(calls), nativeUsdMicro);
  if (usdScope) {
    const total = value ? totalOf(value, []) : ({ kind: 'unavailable', reason: 'the outflows were not valued' } as const);
    const doubt =
      total.kind === 'unpriced'
        ? `${total.asset === 'native' ? 'the native coin' : `token ${total.asset}`} is not priced (${total.reason})`
        : total.kind === 'unavailable'
          ? `what leaves the wallet is not known (${total.reason})`
          : total.unbounded
            ? 'it grants an allowance without bound'
            : undefined;
    if (doubt !== undefined) return refused(usdScope, `budget ${usdScope.budget.name} of policy ${usdScope.policy} cannot count this execution: ${doubt}`);
    if (total.kind === 'priced') outflowsMicroUsd = total.microUsd;
  }
  const cost = weiToMicroUsd(costWei, nativeUsdMicro) + outflowsMicroUsd;
  const refusal = ledger.reserve(req, scopes, cost, t);
  if (refusal) {
    r.deps.onPolicyDecision?.(req, { allowed: false, code: 'policy_denied', policy: refusal.policy, rule: null, message: refusal.message, policies: [refusal.policy] });
    return { kind: 'refused', refusal };
  }
  return {
    kind: 'held',
    spend: {
      at: t.toISOString(),
      microUsd: cost.toString(),
      outflowsMicroUsd: outflowsMicroUsd.toString(),
      nativeUsdMicro: nativeUsdMicro.toString(),
      until: new Date(t.getTime() + longestWindowMs(scopes)).toISOString(),
    },
  };
}

/** Native value the calls send: what a count budget's record says left the wallet (nothing is traced for it). */
const nativeValueOf = (calls: readonly Call[]): bigint => calls.reduce((sum, c) => sum + BigInt(c.value), 0n);

export function failByBudget(r: Reconciling, req: Parameters<typeof fail>[1], refusal: BudgetRefusal) {
  return fail(
    r,
    req,
    { code: 'policy_denied', message: `${refusal.message}; nothing was executed`, policy: { name: refusal.policy, budget: refusal.budget } },
    { PolicyAllowed: ['False', 'BudgetExceeded', refusal.message] },
  );
}

