import { randomBytes } from 'node:crypto';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { Hex } from 'viem';
import type { ExecutionRequest } from '../../api/v1alpha1/index.ts';
import { chainUnderTest, freshSecret } from '../../../test/support/chainUnderTest.ts';
import { createChainWorker, type LocalChainWorker } from '../../chain/worker/index.ts';
import { executionRequest } from '../../gateway/testing/harness.ts';
import { createInclusionAudit, InclusionSuspects } from './inclusionAudit.ts';

/**
 * How far back a look at the chain goes, against the devnet's real receipts: requests that point at real
 * transactions are in place; requests that point at transactions the chain never had stand for inclusions it lost.
 */
describe('inclusion audit: what a look costs', () => {
  const env = chainUnderTest('arbitrum');
  let worker: LocalChainWorker;
  let real: { txHash: Hex; blockNumber: bigint; blockHash: Hex };
  const T0 = Date.parse('2030-01-01T12:00:00.000Z');
  const op = { hash: `0x${'aa'.repeat(32)}` } as NonNullable<ExecutionRequest['status']>['userOperation'];

  beforeAll(async () => {
    worker = await createChainWorker(env.config, { serviceSecret: freshSecret() });
    const hash = await env.funded.sendTransaction({ to: `0x${'42'.repeat(20)}`, value: 1n });
    const receipt = await env.client.waitForTransactionReceipt({ hash });
    real = { txHash: hash, blockNumber: receipt.blockNumber, blockHash: receipt.blockHash };
  });
  afterAll(() => worker?.close());

  let seq = 0;
  /** A Confirmed request completed at `completedAt`: in place (the real transaction) or lost (one the chain never had, `above` blocks higher). */
  const confirmed = (completedAt: number, lost?: { above: bigint }): ExecutionRequest => ({
    ...executionRequest(`req-audit-${++seq}`, 'client-1', { chain: 'arbitrum' }),
    status: {
      phase: 'Confirmed',
      userOperation: op,
      completionTime: new Date(completedAt).toISOString(),
      ...(lost
        ? { txHash: `0x${randomBytes(32).toString('hex')}`, blockNumber: String(real.blockNumber + lost.above), blockHash: `0x${randomBytes(32).toString('hex')}` }
        : { txHash: real.txHash, blockNumber: String(real.blockNumber), blockHash: real.blockHash }),
    },
  });

  function audit(requests: () => ExecutionRequest[], now: () => number) {
    const suspects = new InclusionSuspects();
    const checks: number[] = [];
    const a = createInclusionAudit({
      inclusions: () => requests(),
      workers: new Map([['arbitrum', worker]]),
      suspects,
      now,
      onChecked: (_chain, _trigger, n) => checks.push(n),
    });
    return { scan: a.scan, suspects, checked: () => checks.reduce((x, y) => x + y, 0) };
  }

  it('nothing lost: a start looks at the fresh inclusions and a few settled ones; a periodic look at the new ones and one check-point', async () => {
    const settled = Array.from({ length: 200 }, () => confirmed(T0 - 600_000));
    let fresh = [confirmed(T0), confirmed(T0 - 1_000)];
    let clock = T0 + 5_000;
    const a = audit(() => [...settled, ...fresh], () => clock);

    const start = await a.scan('arbitrum', 'start');
    expect(start).toMatchObject({ checked: 2 + 8, changed: 0, reachedIntact: true, lostAll: false, truncated: false });
    expect(a.checked()).toBe(10);

    // The next look: what completed since the previous one, with its minute of overlap (the two fresh ones
    // again), and the check-point.
    clock = T0 + 120_000;
    expect(await a.scan('arbitrum', 'watch')).toMatchObject({ checked: 2 + 1, changed: 0 });
    // One new inclusion since: it and the check-point.
    clock = T0 + 240_000;
    fresh = [...fresh, confirmed(clock - 1_000)];
    expect(await a.scan('arbitrum', 'watch')).toMatchObject({ checked: 1 + 1, changed: 0 });
    expect(a.suspects.size).toBe(0);
  });

  it('lost blocks: the walk goes down as far as the loss and stops at the first inclusion in place', async () => {
    const intact = Array.from({ length: 100 }, () => confirmed(T0 - 600_000));
    const lost = Array.from({ length: 30 }, (_, i) => confirmed(T0 - 300_000, { above: 1000n + BigInt(i) }));
    const a = audit(() => [...intact, ...lost, confirmed(T0)], () => T0 + 5_000);
    const report = await a.scan('arbitrum', 'start');
    // The fresh one, then the settled from the highest block: 8 (all lost), then 25 (22 lost, 3 in place): stop.
    expect(report).toMatchObject({ checked: 1 + 8 + 25, changed: 30, reachedIntact: true, lostAll: false });
    expect(a.suspects.keys().map((k) => k.name).sort()).toEqual(lost.map((r) => r.metadata.name).sort());
  });

  it('a reset that took everything: every inclusion is looked up, each is a suspect, and the log is told the archive may be wrong too', async () => {
    const lost = Array.from({ length: 60 }, (_, i) => confirmed(T0 - 600_000 + i * 10_000, { above: 10n + BigInt(i) }));
    const a = audit(() => lost, () => T0);
    const report = await a.scan('arbitrum', 'start');
    expect(report).toMatchObject({ checked: 60, changed: 60, reachedIntact: false, lostAll: true });
    expect(a.suspects.size).toBe(60);
  });
});
