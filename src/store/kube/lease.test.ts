/**
 * Lease leader election against a real API server, with short timings (lease 3 s, renew deadline 2 s,
 * retry 0.5 s; production uses 15/10/2). The invariant under every failure: never two leaders at once.
 */
import { CoordinationV1Api, type V1LeaseSpec } from '@kubernetes/client-node';
import { describe, expect, it } from 'vitest';
import type { LeaderElector } from '../../lib/leaderElection.ts';
import { quiet } from '../../runtime/testing/support.ts';
import { spawnTs, type Child } from '../embedded/testing/child.ts';
import { createLeaseElector } from './lease.ts';
import { useKubeApiServer } from '../../../test/support/kubeStoreEnv.ts';

const LEASE_S = 3;
const RENEW_S = 2;
const RETRY_S = 0.5;
const env = useKubeApiServer();

/** Who led when, across every elector of a test (in-process or child): to check they never overlap. */
class Timeline {
  readonly spans: { who: string; from: number; to?: number }[] = [];
  started(who: string): void {
    this.spans.push({ who, from: performance.now() });
  }
  stopped(who: string): void {
    const open = this.spans.findLast((s) => s.who === who && s.to === undefined);
    if (open) open.to = performance.now();
  }
  leaders(): string[] {
    return this.spans.filter((s) => s.to === undefined).map((s) => s.who);
  }
  async waitForLeader(timeoutMs = 10_000, except?: string): Promise<{ who: string; at: number }> {
    const deadline = performance.now() + timeoutMs;
    for (;;) {
      const open = this.spans.find((s) => s.to === undefined && s.who !== except);
      if (open) return { who: open.who, at: open.from };
      if (performance.now() > deadline) throw new Error(`no leader after ${timeoutMs} ms`);
      await new Promise((r) => setTimeout(r, 20));
    }
  }
  /** No two leaderships overlap. */
  assertNoOverlap(): void {
    const sorted = [...this.spans].sort((a, b) => a.from - b.from);
    for (let i = 1; i < sorted.length; i++) {
      const prev = sorted[i - 1]!;
      expect(prev.to, `${prev.who} still leading when ${sorted[i]!.who} started`).toBeDefined();
      expect(prev.to!).toBeLessThanOrEqual(sorted[i]!.from);
    }
  }
}

async function setup() {
  const namespace = await env.freshNamespace('lease');
  const kc = env.kube.kubeConfig();
  const timeline = new Timeline();
  const elector = (identity: string): { elector: LeaderElector; run: Promise<void> } => {
    const elector = createLeaseElector({
      kubeConfig: env.kube.kubeConfig(),
      namespace,
      name: 'controller',
      identity,
      leaseDurationSeconds: LEASE_S,
      renewDeadlineSeconds: RENEW_S,
      retryPeriodSeconds: RETRY_S,
      logger: quiet,
    });
    const run = elector.run({
      onStartedLeading: () => timeline.started(identity),
      onStoppedLeading: () => timeline.stopped(identity),
    });
    run.catch(() => undefined);
    env.cleanup(() => elector.stop());
    return { elector, run };
  };
  const lease = async (): Promise<V1LeaseSpec> =>
    (await kc.makeApiClient(CoordinationV1Api).readNamespacedLease({ namespace, name: 'controller' })).spec!;
  const child = (identity: string): Child => {
    const c = spawnTs('src/store/kube/testing/leaseChild.ts', [
      env.kube.kubeconfigPath,
      namespace,
      'controller',
      identity,
      String(LEASE_S),
      String(RENEW_S),
      String(RETRY_S),
    ]);
    let seen = 0;
    const onLine = () => {
      for (; seen < c.lines.length; seen++) {
        if (c.lines[seen] === 'started') timeline.started(identity);
        if (c.lines[seen] === 'stopped') timeline.stopped(identity);
      }
    };
    c.proc.stdout.on('data', () => setImmediate(onLine));
    env.cleanup(() => c.kill('SIGKILL'));
    return c;
  };
  return { namespace, timeline, elector, lease, child };
}

describe('Lease leader election', () => {
  it('of two candidates exactly one leads, and keeps leading', async () => {
    const { timeline, elector, lease } = await setup();
    const a = elector('a');
    const b = elector('b');
    const first = await timeline.waitForLeader();
    // Several lease durations: the leader renews, the other never takes over.
    await new Promise((r) => setTimeout(r, 2.5 * LEASE_S * 1000));
    expect(timeline.spans).toHaveLength(1);
    expect(timeline.leaders()).toEqual([first.who]);
    expect([a.elector.isLeader(), b.elector.isLeader()].filter(Boolean)).toHaveLength(1);
    const spec = await lease();
    expect(spec.holderIdentity).toBe(first.who);
    expect(spec.leaseDurationSeconds).toBe(LEASE_S);
    expect(spec.leaseTransitions).toBe(0);
    // Still renewed: a retry period later the record carries a later renewTime, and the same holder.
    await new Promise((r) => setTimeout(r, 2 * RETRY_S * 1000));
    const later = await lease();
    expect(later.holderIdentity).toBe(first.who);
    expect(new Date(later.renewTime as unknown as string).getTime()).toBeGreaterThan(new Date(spec.renewTime as unknown as string).getTime());
  });

  it('a leader that stops gracefully releases the lease: the other takes over within a retry period', async () => {
    const { timeline, elector, lease } = await setup();
    const electors = { a: elector('a'), b: elector('b') };
    const first = await timeline.waitForLeader();
    const before = await lease();
    const t = performance.now();
    await electors[first.who as 'a' | 'b'].elector.stop();
    await expect(electors[first.who as 'a' | 'b'].run).resolves.toBeUndefined();
    const next = await timeline.waitForLeader(10_000, first.who);
    const takeoverMs = next.at - t;
    timeline.assertNoOverlap();
    const spec = await lease();
    expect(spec.holderIdentity).toBe(next.who);
    expect(spec.leaseTransitions).toBe((before.leaseTransitions ?? 0) + 1);
    console.log(`graceful handover in ${Math.round(takeoverMs)} ms (retry period ${RETRY_S * 1000} ms)`);
  });

  it('a leader killed without releasing: the other takes over once the lease has not changed for its duration', async () => {
    const { timeline, elector, child, lease } = await setup();
    const leader = child('killed');
    await leader.waitFor((l) => l === 'started', 20_000);
    elector('survivor');
    // The survivor sees the lease renewed for a while, so its clock on the lease is running.
    await new Promise((r) => setTimeout(r, 1_500));
    expect(timeline.leaders()).toEqual(['killed']);

    await leader.kill('SIGKILL');
    const killedAt = performance.now();
    timeline.stopped('killed'); // it can no longer act
    const next = await timeline.waitForLeader(3 * LEASE_S * 1000, 'killed');
    const takeoverMs = next.at - killedAt;
    expect(next.who).toBe('survivor');
    // The last renew was at most a retry period before the kill; the survivor needs a full lease duration
    // of no change, checked every retry period (jittered).
    expect(takeoverMs).toBeGreaterThan((LEASE_S - RETRY_S) * 1000 - 100);
    expect((await lease()).holderIdentity).toBe('survivor');
    console.log(`takeover after a kill in ${Math.round(takeoverMs)} ms (lease ${LEASE_S * 1000} ms)`);
  });

  it('a leader that cannot renew (API server hung) steps down before the lease can expire, and only one leads after', async () => {
    const { timeline, elector } = await setup();
    elector('a');
    elector('b');
    const first = await timeline.waitForLeader();
    await new Promise((r) => setTimeout(r, 1_000));

    env.kube.pauseApiServer();
    const pausedAt = performance.now();
    let resumed = false;
    env.cleanup(() => (resumed ? undefined : env.kube.resumeApiServer()));
    await expect.poll(() => timeline.leaders(), { timeout: 2 * LEASE_S * 1000, interval: 20 }).toEqual([]);
    const steppedDownMs = timeline.spans[0]!.to! - pausedAt;
    expect(timeline.spans[0]!.who).toBe(first.who);
    // Nobody else led meanwhile (asserted below: no two spans overlap); the figure is printed, not asserted.

    await new Promise((r) => setTimeout(r, LEASE_S * 1000));
    expect(timeline.leaders()).toEqual([]);
    env.kube.resumeApiServer();
    resumed = true;
    await timeline.waitForLeader(15_000);
    await new Promise((r) => setTimeout(r, LEASE_S * 1000));
    expect(timeline.leaders()).toHaveLength(1);
    timeline.assertNoOverlap();
    console.log(`stepped down ${Math.round(steppedDownMs)} ms after the API server hung (renew deadline ${RENEW_S * 1000} ms)`);
  });

  it('a leader whose API server is gone (connection refused) steps down too', async () => {
    const { timeline, elector } = await setup();
    elector('a');
    await timeline.waitForLeader();
    await env.kube.killApiServer();
    const killedAt = performance.now();
    let restarted = false;
    env.cleanup(() => (restarted ? undefined : env.kube.startApiServer()));
    await expect.poll(() => timeline.leaders(), { timeout: 2 * LEASE_S * 1000, interval: 20 }).toEqual([]);
    console.log(`stepped down ${Math.round(timeline.spans[0]!.to! - killedAt)} ms after the API server went away`);
    await env.kube.startApiServer();
    restarted = true;
    // The same identity holds the lease on record: it leads again at once, no lease duration to wait.
    await timeline.waitForLeader(15_000);
    expect(timeline.spans).toHaveLength(2);
  });

  it('refuses timings that could let two replicas lead at once', () => {
    const base = { kubeConfig: env.kube.kubeConfig(), namespace: 'default', name: 'x', identity: 'i' };
    expect(() => createLeaseElector({ ...base, leaseDurationSeconds: 10, renewDeadlineSeconds: 10 })).toThrow(/greater than renewDeadline/);
    expect(() => createLeaseElector({ ...base, renewDeadlineSeconds: 2, retryPeriodSeconds: 2 })).toThrow(/retryPeriod/);
    expect(() => createLeaseElector({ ...base, identity: '' })).toThrow(/identity/);
  });
});
