import { V1MicroTime, type KubeConfig, type V1Lease, type V1LeaseSpec } from '@kubernetes/client-node';
import type { LeaderCallbacks, LeaderElector } from '../../lib/leaderElection.ts';
import { stderrLogger, type Logger } from '../../lib/logger.ts';
import { isStoreError } from '../types.ts';
import { createKubeClient, type KubeClient } from './client.ts';
import { toStoreError } from './errors.ts';

export interface LeaseElectorOptions {
  kubeConfig: KubeConfig;
  namespace: string;
  /** The Lease's name: every replica of one controller uses the same. */
  name: string;
  /** This replica's name in the Lease (the pod name): unique among the replicas. */
  identity: string;
  /** How long the others wait, after they last saw the Lease change, before taking it (default 15). */
  leaseDurationSeconds?: number;
  /** The leader steps down when it has not renewed for this long (default 10; < leaseDurationSeconds). */
  renewDeadlineSeconds?: number;
  /** How often the leader renews and the others try to acquire (default 2). */
  retryPeriodSeconds?: number;
  logger?: Logger;
}

/** Candidates try at retryPeriod × [1, 1 + JITTER), so they do not all hit the API server at once. */
const JITTER = 0.2;

/**
 * client-go's Lease-based leader election (k8s.io/client-go/tools/leaderelection), on a coordination.k8s.io/v1
 * Lease:
 *
 * - A candidate takes the Lease when it is free (no holder, or released) or when it has not changed for
 *   leaseDurationSeconds as measured on this process's monotonic clock since it last saw it change.
 *   renewTime in the Lease is written by the holder's clock, and clocks of two nodes disagree by any amount;
 *   timing "no change for leaseDuration" locally needs only that clocks run at about the same rate.
 * - The leader renews every retryPeriod (a write with a resourceVersion precondition: two candidates cannot
 *   both win) and steps down, calling onStoppedLeading, once renewDeadline has passed since the last
 *   successful renew *was sent*. Any other replica waits leaseDuration from when it saw that renew, which is
 *   after it was sent: the leader has stopped for at least leaseDuration − renewDeadline before anyone else
 *   can start. That gap is what keeps two replicas from reconciling at once, even with the API server down.
 * - stop() releases the Lease (no holder, leaseDurationSeconds 1): another replica takes it within one
 *   retry period instead of waiting out the lease.
 */
export function createLeaseElector(opts: LeaseElectorOptions): LeaderElector {
  return new LeaseElector(opts);
}

type LeaseRecord = Pick<V1LeaseSpec, 'holderIdentity' | 'leaseDurationSeconds' | 'acquireTime' | 'renewTime' | 'leaseTransitions'>;

class LeaseElector implements LeaderElector {
  private readonly client: KubeClient;
  private readonly log: Logger;
  private readonly leaseMs: number;
  private readonly renewDeadlineMs: number;
  private readonly retryMs: number;
  private readonly leaseDurationSeconds: number;

  /** The Lease as last read or written, and when (monotonic ms) it was last seen to change. */
  private observed: V1Lease | undefined;
  private observedJson = '';
  private observedAt = 0;

  private leading = false;
  private stopping = false;
  private running: Promise<void> | undefined;
  private wake: (() => void) | undefined;
  /** Ends the current leadership (renew deadline passed, lease lost, or stop()). */
  private endLeadership: (() => void) | undefined;

  constructor(private readonly opts: LeaseElectorOptions) {
    this.leaseDurationSeconds = opts.leaseDurationSeconds ?? 15;
    this.leaseMs = this.leaseDurationSeconds * 1000;
    this.renewDeadlineMs = (opts.renewDeadlineSeconds ?? 10) * 1000;
    this.retryMs = (opts.retryPeriodSeconds ?? 2) * 1000;
    // client-go's checks: without them the leader could still be working when another replica starts.
    if (this.leaseMs <= this.renewDeadlineMs) throw new Error('leaseDurationSeconds must be greater than renewDeadlineSeconds');
    if (this.renewDeadlineMs <= this.retryMs * (1 + JITTER)) {
      throw new Error(`renewDeadlineSeconds must be greater than retryPeriodSeconds × ${1 + JITTER}`);
    }
    if (!opts.identity) throw new Error('leader election needs a non-empty identity');
    this.client = createKubeClient(opts.kubeConfig);
    this.log = opts.logger ?? stderrLogger;
  }

  isLeader(): boolean {
    return this.leading;
  }

  run(callbacks: LeaderCallbacks): Promise<void> {
    if (this.running) throw new Error('lease elector: run() called twice');
    this.running = this.loop(callbacks);
    return this.running;
  }

  async stop(): Promise<void> {
    this.stopping = true;
    this.wake?.();
    this.endLeadership?.();
    await this.running?.catch(() => undefined);
    this.client.close();
  }

  private async loop(callbacks: LeaderCallbacks): Promise<void> {
    const lease = `${this.opts.namespace}/${this.opts.name}`;
    while (!this.stopping) {
      const sentAt = performance.now();
      if (!(await this.tryAcquireOrRenew(this.retryMs))) {
        await this.sleep(this.retryMs * (1 + Math.random() * JITTER));
        continue;
      }
      if (this.stopping) {
        await this.release();
        break;
      }
      this.log.info({ lease, identity: this.opts.identity }, 'leader election: acquired the lease');
      const failure = await this.lead(callbacks, sentAt);
      if (this.stopping || failure !== undefined) {
        await this.release();
        if (failure !== undefined) throw failure;
        break;
      }
    }
  }

  /**
   * One leadership: starts the leader, renews until the deadline passes, the lease is lost or stop(), then
   * ends it. Returns the error onStartedLeading threw, if it did.
   */
  private async lead(callbacks: LeaderCallbacks, acquiredAt: number): Promise<unknown> {
    const lease = `${this.opts.namespace}/${this.opts.name}`;
    const abort = new AbortController();
    let lastRenewSent = acquiredAt;
    let deadline: NodeJS.Timeout | undefined;
    let stopped: Promise<void> | undefined;
    let reason = 'stopped';
    let failure: unknown;
    // Synchronous from the moment leadership ends: onStoppedLeading must not wait behind a renew in flight
    // or a start in progress, or the leader could outlive its lease.
    const end = () => {
      if (stopped) return;
      this.leading = false;
      if (deadline) clearTimeout(deadline);
      abort.abort();
      this.log[this.stopping && failure === undefined ? 'info' : 'error'](
        { lease, identity: this.opts.identity, reason },
        'leader election: leadership ended',
      );
      stopped = (async () => callbacks.onStoppedLeading())().catch((err: unknown) =>
        this.log.error({ lease, err }, 'leader election: onStoppedLeading threw'),
      );
      this.wake?.();
    };
    this.endLeadership = end;
    const armDeadline = () => {
      if (deadline) clearTimeout(deadline);
      deadline = setTimeout(
        () => {
          reason = `no successful renew for ${this.renewDeadlineMs} ms`;
          end();
        },
        Math.max(0, lastRenewSent + this.renewDeadlineMs - performance.now()),
      );
    };
    this.leading = true;
    armDeadline();
    const started = (async () => callbacks.onStartedLeading(abort.signal))().catch((e: unknown) => {
      failure = e;
      reason = 'onStartedLeading failed';
      end();
    });

    while (stopped === undefined) {
      await this.sleep(this.retryMs);
      if (stopped !== undefined) break;
      const sentAt = performance.now();
      // The renew may not outlive the deadline: a hung API server must not keep us leading past it.
      const ok = await this.tryAcquireOrRenew(Math.max(1, lastRenewSent + this.renewDeadlineMs - sentAt));
      if (stopped !== undefined) break;
      if (ok) {
        lastRenewSent = sentAt;
        armDeadline();
      } else if (this.observedHolder() !== this.opts.identity) {
        reason = `the lease is held by ${JSON.stringify(this.observedHolder())}`;
        end();
      }
    }
    this.endLeadership = undefined;
    // Not standing again (nor releasing) before the leader's start and stop have both finished.
    await started;
    await stopped;
    return failure;
  }

  /**
   * One attempt, bounded by `timeoutMs`: renews the Lease if we hold it, takes it if it is free or expired.
   * True if we hold it now.
   */
  private async tryAcquireOrRenew(timeoutMs: number): Promise<boolean> {
    const deadline = performance.now() + timeoutMs;
    const remaining = () => Math.max(1, deadline - performance.now());
    const { namespace, name, identity } = this.opts;
    const api = this.client.coordination;
    try {
      // The leader writes over the version it last wrote without reading first (client-go's fast path): one
      // request per renew. A conflict means someone else wrote; then read and decide as a candidate.
      if (this.leading && this.observed) {
        try {
          await this.write(this.renewed(this.observed), remaining());
          return true;
        } catch (e) {
          if (!isStoreError(e, 'Conflict')) throw e;
        }
      }
      let current: V1Lease;
      try {
        current = await api.readNamespacedLease({ namespace, name }, this.client.withTimeout(remaining()));
      } catch (e) {
        const err = toStoreError(e, { verb: 'get', what: `Lease ${namespace}/${name}` });
        if (!isStoreError(err, 'NotFound')) throw err;
        const now = new V1MicroTime();
        const created = await api.createNamespacedLease(
          {
            namespace,
            body: {
              apiVersion: 'coordination.k8s.io/v1',
              kind: 'Lease',
              metadata: { name, namespace },
              spec: {
                holderIdentity: identity,
                leaseDurationSeconds: this.leaseDurationSeconds,
                acquireTime: now,
                renewTime: now,
                leaseTransitions: 0,
              },
            },
          },
          this.client.withTimeout(remaining()),
        );
        this.observe(created);
        return true;
      }
      this.observe(current);
      const holder = current.spec?.holderIdentity ?? '';
      const durationMs = (current.spec?.leaseDurationSeconds ?? this.leaseDurationSeconds) * 1000;
      if (holder !== '' && holder !== identity && performance.now() < this.observedAt + durationMs) return false;
      await this.write(holder === identity ? this.renewed(current) : this.taken(current), remaining());
      return true;
    } catch (e) {
      const err = toStoreError(e, { verb: 'acquire or renew', what: `Lease ${namespace}/${name}` });
      // Losing a race to another candidate is the normal case, not worth a warning.
      if (!isStoreError(err, 'Conflict') && !isStoreError(err, 'AlreadyExists')) {
        this.log.warn({ lease: `${namespace}/${name}`, err }, 'leader election: could not acquire or renew the lease');
      }
      return false;
    }
  }

  /** The Lease as this candidate's renewal: same term, renewTime now. */
  private renewed(lease: V1Lease, now = new V1MicroTime()): V1Lease {
    return {
      ...lease,
      spec: {
        ...lease.spec,
        holderIdentity: this.opts.identity,
        leaseDurationSeconds: this.leaseDurationSeconds,
        renewTime: now,
      },
    };
  }

  /** The Lease taken over by this candidate: a renewal that also starts a new term. */
  private taken(lease: V1Lease): V1Lease {
    const now = new V1MicroTime();
    const renewed = this.renewed(lease, now);
    return {
      ...renewed,
      spec: { ...renewed.spec, acquireTime: now, leaseTransitions: (lease.spec?.leaseTransitions ?? 0) + 1 },
    };
  }

  /** Replaces the Lease with a resourceVersion precondition (the version `lease` was read at). */
  private async write(lease: V1Lease, timeoutMs: number): Promise<void> {
    const { namespace, name } = this.opts;
    try {
      const written = await this.client.coordination.replaceNamespacedLease(
        { namespace, name, body: lease },
        this.client.withTimeout(timeoutMs),
      );
      this.observe(written);
    } catch (e) {
      throw toStoreError(e, { verb: 'update', what: `Lease ${namespace}/${name}` });
    }
  }

  /** Records the Lease; the clock restarts only when its record changed (that is what "alive" means). */
  private observe(lease: V1Lease): void {
    const spec = lease.spec ?? {};
    const record: LeaseRecord = {
      holderIdentity: spec.holderIdentity,
      leaseDurationSeconds: spec.leaseDurationSeconds,
      acquireTime: spec.acquireTime,
      renewTime: spec.renewTime,
      leaseTransitions: spec.leaseTransitions,
    };
    const json = JSON.stringify(record);
    if (json !== this.observedJson) {
      this.observedJson = json;
      this.observedAt = performance.now();
    }
    this.observed = lease;
  }

  private observedHolder(): string {
    return this.observed?.spec?.holderIdentity ?? '';
  }

  /** Gives the Lease up if we hold it, so another replica need not wait for it to expire. */
  private async release(): Promise<void> {
    const { namespace, name, identity } = this.opts;
    if (!this.observed || this.observedHolder() !== identity) return;
    const now = new V1MicroTime();
    const released: V1Lease = {
      ...this.observed,
      spec: { ...this.observed.spec, holderIdentity: '', leaseDurationSeconds: 1, acquireTime: now, renewTime: now },
    };
    try {
      await this.write(released, this.renewDeadlineMs);
      this.log.info({ lease: `${namespace}/${name}`, identity }, 'leader election: released the lease');
    } catch (err) {
      // It expires on its own after leaseDuration; a conflict means someone has already taken it.
      this.log.warn({ lease: `${namespace}/${name}`, err }, 'leader election: could not release the lease');
    }
  }

  private sleep(ms: number): Promise<void> {
    return new Promise((resolve) => {
      const done = () => {
        clearTimeout(timer);
        if (this.wake === done) this.wake = undefined;
        resolve();
      };
      const timer = setTimeout(done, ms);
      this.wake = done;
    });
  }
}
