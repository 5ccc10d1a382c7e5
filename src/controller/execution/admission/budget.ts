import type { Call, SpendReservation } from '../../../api/v1alpha1/index.ts';
import { budgetsFor, longestWindowMs, weiToMicroUsd, type BudgetRefusal } from '../../../policy/budgets.ts';
import { totalOf } from '../../../policy/index.ts';
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
    const ledger = r.deps.spendLedger;
    const scopes = ledger ? budgetsFor(r.deps.policiesFor?.(req.spec.apiClient) ?? [], req.spec.apiClient, req.spec.agentId) : [];
    if (!ledger || scopes.length === 0) return { kind: 'pass', found: {} };
    const sim = found.simulation!;
    const price = r.deps.nativeUsdPrice?.(req.spec.chain);
    if (price === undefined) {
      const scope = scopes[0]!;
      const message = `budget ${scope.budget.name} of policy ${scope.policy} cannot be judged: the native coin of ${req.spec.chain} has no price`;
      return { kind: 'stop', result: await failByBudget(r, req, { policy: scope.policy, budget: scope.budget.name, spent: { microUsd: 0n, count: 0 }, costMicroUsd: 0n, message }) };
    }
    const nativeUsdMicro = usdToMicro(price);
    // What leaves the wallet: under a USD budget, the policy step's valuation of the traced outflows (tokens and
    // native value) and of the allowances granted, fail closed when any of it is unpriced or untraced; under count
    // budgets alone nothing is traced, and the calls' native value stands for it.
    const usdScope = scopes.find((s) => s.limitMicroUsd !== undefined);
    let outflowsMicroUsd = weiToMicroUsd(nativeValueOf(calls), nativeUsdMicro);
    if (usdScope) {
      const total = found.value ? totalOf(found.value, []) : ({ kind: 'unavailable', reason: 'the outflows were not valued' } as const);
      const doubt =
        total.kind === 'unpriced'
          ? `${total.asset === 'native' ? 'the native coin' : `token ${total.asset}`} is not priced (${total.reason})`
          : total.kind === 'unavailable'
            ? `what leaves the wallet is not known (${total.reason})`
            : total.unbounded
              ? 'it grants an allowance without bound'
              : undefined;
      if (doubt !== undefined) {
        const message = `budget ${usdScope.budget.name} of policy ${usdScope.policy} cannot count this execution: ${doubt}`;
        return { kind: 'stop', result: await failByBudget(r, req, { policy: usdScope.policy, budget: usdScope.budget.name, spent: { microUsd: 0n, count: 0 }, costMicroUsd: 0n, message }) };
      }
      if (total.kind === 'priced') outflowsMicroUsd = total.microUsd;
    }
    const cost = weiToMicroUsd(sim.estimatedCostWei, nativeUsdMicro) + outflowsMicroUsd;
    const refusal = ledger.reserve(req, scopes, cost, t);
    if (refusal) {
      r.deps.onPolicyDecision?.(req, { allowed: false, code: 'policy_denied', policy: refusal.policy, rule: null, message: refusal.message, policies: [refusal.policy] });
      return { kind: 'stop', result: await failByBudget(r, req, refusal) };
    }
    const spend: SpendReservation = {
      at: t.toISOString(),
      microUsd: cost.toString(),
      outflowsMicroUsd: outflowsMicroUsd.toString(),
      nativeUsdMicro: nativeUsdMicro.toString(),
      until: new Date(t.getTime() + longestWindowMs(scopes)).toISOString(),
    };
    // Written with the status admission's outcome writes (waiting for a payment, paid, or signed: phases/sign.ts),
    // before anything is sent: a crash before that write finds nothing held and admits the request afresh, and
    // nothing of it was broadcast. Until the cache shows it, the ledger holds it (spendLedger.ts).
    return { kind: 'pass', found: { spend } };
  },
};

/** Native value the calls send: what a count budget's record says left the wallet (nothing is traced for it). */
const nativeValueOf = (calls: readonly Call[]): bigint => calls.reduce((sum, c) => sum + BigInt(c.value), 0n);

function failByBudget(r: Reconciling, req: Parameters<typeof fail>[1], refusal: BudgetRefusal) {
  return fail(
    r,
    req,
    { code: 'policy_denied', message: `${refusal.message}; nothing was executed`, policy: { name: refusal.policy, budget: refusal.budget } },
    { PolicyAllowed: ['False', 'BudgetExceeded', refusal.message] },
  );
}

