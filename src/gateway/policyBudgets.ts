import type { BudgetView } from '../api/http/index.ts';
import type { AgentPolicy } from '../api/v1alpha1/index.ts';
import { decimalToMicro, formatMicroUsd } from '../policy/usd.ts';

/** The most rows a policy's status lists (spendStatus.ts): an agent absent from a full list may have spent. */
const STATUS_ROWS = 50;

/**
 * A policy's budgets as one agent sees them: the limits, and what each window held for the agent (the whole key,
 * for the key-level policy) in the policy's status, which the controller refreshes every few seconds.
 */
export function budgetViews(p: AgentPolicy, agentId: string): BudgetView[] {
  const rows = p.status?.spend;
  return (p.spec.budgets ?? []).map((b) => {
    // One window for the key (key-level) or the policy's agents (`per: policy`), else the agent's own.
    const shared = p.spec.agents === undefined || b.per === 'policy';
    const row = rows?.find((r) => r.budget === b.name && (shared ? r.agentId === undefined : r.agentId === agentId));
    // Listed rows are every agent with spend unless the list is full: an agent not listed then spent nothing.
    const asOf = row?.asOf ?? (rows && rows.length < STATUS_ROWS ? rows[0]?.asOf : undefined);
    const spentUsd = row?.usd ?? '0';
    const spentCount = row?.count ?? 0;
    const spent =
      asOf === undefined
        ? null
        : {
            usd: spentUsd,
            count: spentCount,
            remaining_usd: b.usd === undefined ? null : formatMicroUsd(maxZero(decimalToMicro(b.usd) - decimalToMicro(spentUsd))),
            remaining_count: b.count === undefined ? null : Math.max(0, b.count - spentCount),
            as_of: asOf,
          };
    return { policy: p.metadata.name, name: b.name, window: b.window, usd: b.usd ?? null, count: b.count ?? null, spent };
  });
}

const maxZero = (n: bigint): bigint => (n > 0n ? n : 0n);
