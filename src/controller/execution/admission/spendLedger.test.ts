import { describe, expect, it } from 'vitest';
import type { ExecutionRequest } from '../../../api/v1alpha1/index.ts';
import { budgetsFor } from '../../../policy/budgets.ts';
import { policy, request, spend, T0 } from '../../../policy/testing/budgets.ts';
import { SpendLedger } from './spendLedger.ts';
import { policySpend } from './spendStatus.ts';

describe('the spend ledger', () => {
  const scopes = budgetsFor([policy('key', { budgets: [{ name: 'burst', window: '1h', count: 2, usd: '10' }] })], 'key-1', 'a');
  const at = new Date(T0);

  /** A ledger over a cache the test sets: requests with a reservation, and every request by name. */
  const ledgerOver = (cache: { requests: ExecutionRequest[] }) =>
    new SpendLedger(
      () => cache.requests.filter((r) => r.status?.spend),
      (_ns, name) => cache.requests.find((r) => r.metadata.name === name),
    );

  it('checks and holds in one step, so the last of a budget goes to one request only; its own reservation is replaced', () => {
    const cache = { requests: ['r1', 'r2', 'r3'].map((n) => request(n, n === 'r2' ? 'b' : 'a')) };
    const ledger = ledgerOver(cache);
    expect(ledger.reserve(request('r1', 'a'), scopes, 4_000_000n, at)).toBeUndefined();
    expect(ledger.reserve(request('r2', 'b'), scopes, 4_000_000n, at)).toBeUndefined();
    expect(ledger.reserve(request('r3', 'a'), scopes, 1n, at)?.budget).toBe('burst'); // the count is full
    expect(ledger.reserve(request('r1', 'a'), scopes, 6_000_000n, at)).toBeUndefined(); // r1 again: 6 + 4 fits 10
    expect(ledger.spentIn(scopes[0]!, T0)).toEqual({ microUsd: 10_000_000n, count: 2 });
    // The cache catches up with r1's written reservation: its record counts, the held one goes.
    cache.requests[0] = request('r1', 'a', { phase: 'Queued', spend: spend(T0, 6_000_000n) });
    expect(ledger.spentIn(scopes[0]!, T0)).toEqual({ microUsd: 10_000_000n, count: 2 });
    // r2's admission stopped after the budget step (its payment refused): failed unsigned, its hold released.
    cache.requests[1] = request('r2', 'b', { phase: 'Failed' });
    expect(ledger.spentIn(scopes[0]!, T0)).toEqual({ microUsd: 6_000_000n, count: 1 });
    // A stale copy of a request without its reservation yet keeps the hold; a request gone drops it.
    expect(ledger.reserve(request('r3', 'a'), scopes, 1_000_000n, at)).toBeUndefined();
    expect(ledger.spentIn(scopes[0]!, T0).count).toBe(2);
    cache.requests.splice(2, 1);
    expect(ledger.spentIn(scopes[0]!, T0).count).toBe(1);
  });

  it('sums the window only, and forgets what failed unsigned', () => {
    const cached = [
      request('old', 'a', { phase: 'Confirmed', spend: spend(T0 - 3_600_000, 5_000_000n) }), // left the 1 h window
      request('failed', 'a', { phase: 'Failed', spend: spend(T0, 5_000_000n) }),
      request('held', 'a', { phase: 'PaymentRequired', spend: spend(T0 - 60_000, 5_000_000n) }),
    ];
    const ledger = ledgerOver({ requests: [...cached, request('next', 'a'), request('over', 'a')] });
    expect(ledger.spentIn(scopes[0]!, T0)).toEqual({ microUsd: 5_000_000n, count: 1 });
    expect(ledger.reserve(request('next', 'a'), scopes, 5_000_000n, at)).toBeUndefined();
    expect(ledger.reserve(request('over', 'a'), scopes, 1n, at)?.message).toMatch(/2 executions per 1h for the key, 2 already/);
  });
});

describe("a policy's spend status", () => {
  const cached = [
    request('a1', 'team-a/1', { phase: 'Confirmed', spend: spend(T0 - 60_000, 2_000_000n) }),
    request('a2', 'team-a/2', { phase: 'Queued', spend: spend(T0 - 30_000, 5_000_000n) }),
    request('b1', 'team-b/1', { phase: 'Queued', spend: spend(T0 - 30_000, 7_000_000n) }),
  ];
  const ledger = new SpendLedger(
    () => cached,
    (_ns, name) => cached.find((r) => r.metadata.name === name),
  );
  const now = new Date(T0);

  it('the key-level policy: one row per budget for the whole key', () => {
    const { spend: rows, summary } = policySpend(policy('key', { budgets: [{ name: 'daily', window: '24h', usd: '50' }] }), ledger, now);
    expect(rows.map(({ asOf: _, ...r }) => r)).toEqual([{ budget: 'daily', usd: '14', count: 3 }]);
    expect(summary).toBe('daily 14/50 USD');
  });

  it('an agent policy: a row per agent it covers (the busiest first), or one for them all with per: policy', () => {
    const team = (per?: 'policy') => policy('team', { agents: { match: 'prefix', agentId: 'team-a/' }, budgets: [{ name: 'hourly', window: '1h', count: 5, ...(per && { per }) }] });
    expect(policySpend(team(), ledger, now).spend.map(({ asOf: _, ...r }) => r)).toEqual([
      { budget: 'hourly', agentId: 'team-a/2', usd: '5', count: 1 },
      { budget: 'hourly', agentId: 'team-a/1', usd: '2', count: 1 },
    ]);
    expect(policySpend(team(), ledger, now).summary).toBe('hourly 1/5 (team-a/2)');
    expect(policySpend(team('policy'), ledger, now).spend.map(({ asOf: _, ...r }) => r)).toEqual([{ budget: 'hourly', usd: '7', count: 2 }]);
  });
});
