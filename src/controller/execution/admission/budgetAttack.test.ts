import { describe, expect, it } from 'vitest';
import { budgetsFor } from '../../../policy/budgets.ts';
import { policy, request, spend, T0 } from '../../../policy/testing/budgets.ts';
import { SpendLedger } from './spendLedger.ts';

/** An outside audit's attack on the budgets, on the spend ledger alone (docs/policies.md "Budgets"). */
describe('budgets under attack: the spend ledger', () => {
  // A burst budget: one execution a minute for the whole key.
  const scopes = budgetsFor([policy('key', { budgets: [{ name: 'burst', window: '1m', count: 1 }] })], 'key-1', 'a');

  it('a request waiting for its payment holds its reservation until its quote expires, even past the window', () => {
    // Admitted 61 s ago (manual mode): reserved, its quote valid 10 min, not paid yet, so nothing was signed.
    const waiting = request('waiting', 'a', {
      phase: 'PaymentRequired',
      spend: spend(T0 - 61_000, 1n),
      payment: {
        quote: { amountUsd: 1, gasCostUsd: 1, feeUsd: 0, chainId: 8453, recipient: `0x${'77'.repeat(20)}`, tokens: [], expiresAt: new Date(T0 + 539_000).toISOString() },
      },
    });
    const cache = [waiting, request('next', 'a')];
    const ledger = new SpendLedger(
      () => cache.filter((r) => r.status?.spend),
      (_ns, name) => cache.find((r) => r.metadata.name === name),
    );
    // It counts until its quote's hold ends, not only in the minute after it was reserved: else ten minutes of
    // unpaid quotes could all be paid and signed at once under "1 a minute".
    expect(ledger.spentIn(scopes[0]!, T0).count).toBe(1);
    expect(ledger.reserve(request('next', 'a'), scopes, 1n, new Date(T0))?.budget).toBe('burst');
  });
});
