import { describe, expect, it } from 'vitest';
import { windowSeconds } from '../api/v1alpha1/index.ts';
import { policy, request, spend, T0 } from './testing/budgets.ts';
import { AgentPolicySpecSchema } from '../api/v1alpha1/agentPolicy.ts';
import { budgetsFor, inScope, overrun, spendOf } from './budgets.ts';
import { decimalToMicro, formatMicroUsd, weiToMicroUsd } from './usd.ts';

describe('budget windows and amounts', () => {
  it('parses windows of s, m, h, d up to 31 days, and refuses the rest in the schema', () => {
    expect([windowSeconds('30s'), windowSeconds('15m'), windowSeconds('24h'), windowSeconds('31d')]).toEqual([30, 900, 86_400, 2_678_400]);
    for (const bad of ['32d', '0h', '1.5h', '24', 'h', '01h', '1w']) expect(windowSeconds(bad), bad).toBeUndefined();
    const parse = (budgets: unknown) => AgentPolicySpecSchema.safeParse({ apiClient: 'k', budgets }).success;
    expect(parse([{ name: 'd', window: '24h', usd: '50' }])).toBe(true);
    expect(parse([{ name: 'd', window: '24h' }])).toBe(false); // limits nothing
    expect(parse([{ name: 'd', window: '32d', count: 1 }])).toBe(false);
    expect(parse([{ name: 'd', window: '1h', usd: '1e3' }])).toBe(false);
    expect(parse([{ name: 'd', window: '1h', usd: '0.0000001' }])).toBe(false); // finer than a micro-dollar
  });

  it('counts USD exactly in micro-dollars, rounding gas up', () => {
    expect(decimalToMicro('48.2')).toBe(48_200_000n);
    expect(decimalToMicro('0.000001')).toBe(1n);
    expect(formatMicroUsd(48_200_000n)).toBe('48.2');
    expect(formatMicroUsd(3_100_000n)).toBe('3.1');
    expect(formatMicroUsd(7n)).toBe('0.000007');
    expect(formatMicroUsd(0n)).toBe('0');
    // 1 wei at 3000 USD: 3e-12 micro-dollars, rounded up to one.
    expect(weiToMicroUsd(1n, 3_000_000_000n)).toBe(1n);
    expect(weiToMicroUsd(10n ** 15n, 3_000_000_000n)).toBe(3_000_000n); // 0.001 coin = 3 USD
  });
});

describe('which budgets bound a request', () => {
  const keyLevel = policy('key', { budgets: [{ name: 'daily', window: '24h', usd: '50' }] });
  const bots = policy('bots', { agents: { match: 'prefix', agentId: 'bot-' }, budgets: [{ name: 'hourly', window: '1h', count: 3 }] });
  const other = policy('other', { apiClient: 'key-2', budgets: [{ name: 'x', window: '1h', count: 1 }] });

  it('the key-level policy’s count the whole key; an agent policy’s each agent id on its own', () => {
    const scopes = budgetsFor([bots, keyLevel, other], 'key-1', 'bot-7');
    expect(scopes.map((s) => [s.policy, s.budget.name, s.agentId, s.windowMs, s.limitMicroUsd])).toEqual([
      ['key', 'daily', undefined, 86_400_000, 50_000_000n],
      ['bots', 'hourly', 'bot-7', 3_600_000, undefined],
    ]);
    expect(budgetsFor([bots, keyLevel], 'key-1', 'alice').map((s) => s.policy)).toEqual(['key']);
  });

  it('`per: policy` makes the agents an agent policy covers share one window, and only them', () => {
    const team = policy('team', { agents: { match: 'prefix', agentId: 'team-a/' }, budgets: [{ name: 'team', window: '1h', count: 5, per: 'policy' }] });
    const [scope] = budgetsFor([team], 'key-1', 'team-a/7');
    expect(scope).toMatchObject({ agents: { match: 'prefix', agentId: 'team-a/' } });
    expect(scope!.agentId).toBeUndefined();
    expect([inScope(scope!, 'key-1', 'team-a/1'), inScope(scope!, 'key-1', 'team-b/1'), inScope(scope!, 'key-2', 'team-a/1')]).toEqual([true, false, false]);
    expect(overrun([scope!], () => ({ microUsd: 0n, count: 5 }), 1n)?.message).toBe('budget team of policy team: 5 executions per 1h for the agents of policy team, 5 already in the window');
  });

  it('the first budget overrun names itself with the figures', () => {
    const scopes = budgetsFor([keyLevel, bots], 'key-1', 'bot-7');
    const spent = new Map([
      ['daily', { microUsd: 48_200_000n, count: 2 }],
      ['hourly', { microUsd: 0n, count: 3 }],
    ]);
    const refusal = overrun(scopes, (s) => spent.get(s.budget.name)!, 3_100_000n);
    expect(refusal).toMatchObject({ policy: 'key', budget: 'daily', costMicroUsd: 3_100_000n });
    expect(refusal?.message).toBe('budget daily of policy key: 50 USD per 24h for the key, spent 48.2, this execution 3.1');
    const cheap = overrun(scopes, (s) => spent.get(s.budget.name)!, 1_000_000n);
    expect(cheap?.message).toBe('budget hourly of policy bots: 3 executions per 1h for agent "bot-7", 3 already in the window');
    expect(overrun(scopes, () => ({ microUsd: 0n, count: 0 }), 50_000_000n)).toBeUndefined(); // exactly the limit fits
  });
});

describe('what a request counts', () => {
  it('nothing without a reservation or once it failed unsigned; its reservation until included; then its actual cost', () => {
    const s = spend(T0, 9_000_000n);
    expect(spendOf(request('a', 'x'))).toBeUndefined();
    expect(spendOf(request('a', 'x', { phase: 'Failed', spend: s }))).toBeUndefined();
    expect(spendOf(request('a', 'x', { phase: 'PaymentRequired', spend: s }))?.microUsd).toBe(9_000_000n);
    const signed = { userOperation: {} as never, spend: { ...s, outflowsMicroUsd: '2000000' } };
    expect(spendOf(request('a', 'x', { phase: 'Failed', ...signed }))?.microUsd).toBe(9_000_000n); // may yet be found included
    // Withdrawn by the kill switch: the bundler confirmed it will never send it.
    expect(spendOf(request('a', 'x', { phase: 'Failed', ...signed, failure: { code: 'agent_suspended', message: '' } }))).toBeUndefined();
    // 0.001 coin of gas at 3000 USD = 3 USD, plus 2 USD that left the wallet; a revert moved nothing but gas.
    expect(spendOf(request('a', 'x', { phase: 'Confirmed', actualGasCostWei: '1000000000000000', ...signed }))?.microUsd).toBe(5_000_000n);
    expect(spendOf(request('a', 'x', { phase: 'Reverted', actualGasCostWei: '1000000000000000', ...signed }))?.microUsd).toBe(3_000_000n);
  });
});
