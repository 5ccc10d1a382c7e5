import { agentInScope, type AgentPolicy, type BudgetSpend } from '../../../api/v1alpha1/index.ts';
import { budgetsFor, type BudgetScope, type Spend } from '../../../policy/budgets.ts';
import { formatMicroUsd } from '../../../policy/usd.ts';
import type { Logger } from '../../../runtime/index.ts';
import { isStoreError, type ResourceStore } from '../../../store/types.ts';
import { sumIn, type SpendLedger } from './spendLedger.ts';

/** The most spend rows a policy's status shows (an agent policy's busiest agents first). */
const MAX_ROWS = 50;

/**
 * What each budget of `policy` holds now: the key-level policy's budgets once, an agent policy's per agent id with
 * spend in the window (the busiest first).
 */
export function policySpend(policy: AgentPolicy, ledger: SpendLedger, now: Date): { spend: BudgetSpend[]; summary: string } {
  const { apiClient, agents } = policy.spec;
  const asOf = now.toISOString();
  const t = now.getTime();
  const spends = ledger.spends(apiClient); // once: every budget below sums the same requests
  // Each agent's own, for per-agent budgets: grouped in one pass.
  const byAgent = new Map<string, Map<string, Spend>>();
  for (const [name, s] of spends) {
    if (agents !== undefined && !agentInScope(agents, s.agentId)) continue;
    let mine = byAgent.get(s.agentId);
    if (!mine) byAgent.set(s.agentId, (mine = new Map()));
    mine.set(name, s);
  }
  const rows: (BudgetSpend & { micro: bigint })[] = [];
  const add = (scope: BudgetScope, from: ReadonlyMap<string, Spend>) => {
    const { microUsd, count } = sumIn(from, scope, t);
    if (scope.agentId !== undefined && count === 0) return; // an agent whose spend left the window
    rows.push({ budget: scope.budget.name, ...(scope.agentId !== undefined && { agentId: scope.agentId }), usd: formatMicroUsd(microUsd), count, asOf, micro: microUsd });
  };
  // One agent id the policy covers (a prefix covers itself): its scopes are those of every agent it covers.
  for (const scope of budgetsFor([policy], apiClient, agents?.agentId ?? '')) {
    if (scope.agentId === undefined) add(scope, spends); // the key's, or the policy's agents' together: one window
    else for (const [agentId, mine] of byAgent) add({ ...scope, agentId }, mine);
  }
  rows.sort((a, b) => (b.micro > a.micro ? 1 : b.micro < a.micro ? -1 : b.count - a.count));
  const spend = rows.slice(0, MAX_ROWS).map(({ micro: _, ...row }) => row);
  return { spend, summary: summaryOf(policy, spend) };
}

/** `daily 48.2/50 USD 7/10`: each budget's busiest row, for the kubectl column. */
function summaryOf(policy: AgentPolicy, spend: readonly BudgetSpend[]): string {
  const parts = (policy.spec.budgets ?? []).map((b) => {
    const row = spend.find((s) => s.budget === b.name);
    const usd = b.usd !== undefined ? ` ${row?.usd ?? '0'}/${b.usd} USD` : '';
    const count = b.count !== undefined ? ` ${row?.count ?? 0}/${b.count}` : '';
    return `${b.name}${usd}${count}${row?.agentId !== undefined ? ` (${row.agentId})` : ''}`;
  });
  return parts.join(', ').slice(0, 256);
}

/**
 * Every `everyMs`, writes each budgeted policy's spend to its status when it changed (the figures, not the time):
 * `kubectl get agentpolicies` shows it, GET /policy returns it. Periodic, never per execution: one write per
 * policy per period at most. Returns a stop function.
 */
export function startSpendStatus(opts: {
  store: ResourceStore;
  policies: () => readonly AgentPolicy[];
  ledger: SpendLedger;
  everyMs: number;
  now?: () => Date;
  logger?: Logger | undefined;
}): () => void {
  const now = opts.now ?? (() => new Date());
  let running: Promise<void> | undefined;
  const refresh = async () => {
    for (const policy of opts.policies()) {
      if (!policy.spec.budgets?.length && !policy.status?.spend) continue;
      const { spend, summary } = policySpend(policy, opts.ledger, now());
      const figures = (rows: readonly BudgetSpend[] | undefined) => JSON.stringify((rows ?? []).map(({ asOf: _, ...r }) => r));
      if (figures(spend) === figures(policy.status?.spend) && summary === policy.status?.spendSummary) continue;
      try {
        await opts.store.updateStatus({ ...policy, status: { ...policy.status, spend, spendSummary: summary } });
      } catch (err) {
        // Changed meanwhile (an operator's apply) or gone: the next period writes from the fresh copy.
        if (!isStoreError(err, 'Conflict') && !isStoreError(err, 'NotFound')) opts.logger?.warn({ policy: policy.metadata.name, err }, 'policy spend not written');
      }
    }
  };
  const timer = setInterval(() => {
    running ??= refresh().finally(() => (running = undefined));
  }, opts.everyMs);
  timer.unref();
  return () => clearInterval(timer);
}
