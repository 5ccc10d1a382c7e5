import { DEFAULT_NAMESPACE, isFinalOrderState, isTerminal, webhookOwed, type ExecutionRequest } from '../../api/v1alpha1/index.ts';
import type { ExecutionArchive } from '../../archive/types.ts';
import { isStoreError, type ResourceStore } from '../../store/types.ts';
import { Controller, Informer, type ControllerHooks, type Logger, type ReconcileResult } from '../../runtime/index.ts';
import type { ControllerMetrics } from '../../runtime/controller.ts';

export interface RetentionControllerOptions {
  store: ResourceStore;
  archive: ExecutionArchive;
  /** A finished request stays a resource this long after its completionTime, then is archived and deleted. */
  retentionSeconds: number;
  namespace?: string;
  /**
   * The execution controller's informer, to share its cache of every ExecutionRequest rather than keep a
   * second one (it must watch the same namespace). Default: an informer of our own, stopped by stop().
   */
  informer?: Informer<'ExecutionRequest'>;
  /** Finished requests whose inclusion was found gone: not archived until the execution controller has judged them. */
  inclusionSuspects?: { has(namespace: string, name: string): boolean };
  /** Requests archived at once (default 4): archiving is I/O, and nothing waits for it. */
  concurrency?: number;
  hooks?: ControllerHooks;
  /** Work-queue and reconcile metrics (src/metrics: controllerMetrics(metrics, 'retention')). */
  metrics?: ControllerMetrics;
  logger?: Logger;
}

export interface RetentionStats {
  /** Requests archived and deleted. */
  archived: number;
  /** Deletes refused because the request changed after it was archived (archived again, then deleted). */
  conflicts: number;
}

export interface RetentionController {
  controller: Controller<'ExecutionRequest'>;
  stats(): RetentionStats;
  /** Stops taking work and waits for the archive-and-delete in flight; stops the informer if it is ours. */
  stop(): Promise<void>;
}

/** A request whose inclusion is being judged is looked at again after this. */
const SUSPECT_RECHECK_MS = 5_000;

/** The delivery states of a request's events, as one comparable string: a change may end what it owes. */
const deliveryStates = (r: ExecutionRequest): string =>
  `${(r.status?.webhookEvents ?? []).map((e) => e.state ?? '').join(',')}|${r.status?.webhook?.state ?? ''}`;

/** An order its operation created that a keeper has yet to settle (status.order): the order controller follows it. */
const orderOpen = (r: ExecutionRequest): boolean => r.status?.order !== undefined && !isFinalOrderState(r.status.order.state);

/**
 * When a request's retention ends: completionTime, else the Succeeded transition, else creation, plus the retention;
 * and not before an unused credit it holds expires (the credit lives in the request), nor before its spend leaves
 * the longest budget window that counted it (the budgets sum the requests themselves: docs/policies.md).
 */
function dueAt(req: ExecutionRequest, retentionMs: number): number {
  const credit = req.status?.payment?.credit;
  const creditEnds = credit && credit.usedBy === undefined ? Date.parse(credit.expiresAt) : NaN;
  const spendEnds = req.status?.spend ? Date.parse(req.status.spend.until) : NaN;
  const holds = [creditEnds, spendEnds].filter(Number.isFinite);
  const succeeded = req.status?.conditions?.find((c) => c.type === 'Succeeded')?.lastTransitionTime;
  for (const t of [req.status?.completionTime, succeeded, req.metadata.creationTimestamp]) {
    const ms = t === undefined ? NaN : Date.parse(t);
    if (Number.isFinite(ms)) return Math.max(ms + retentionMs, ...holds);
  }
  return Date.now() + retentionMs; // no time at all (never from our store): look again after a retention
}

/**
 * Tekton-style cleanup of finished runs: each ExecutionRequest in a terminal phase is archived and then
 * deleted once `retentionSeconds` have passed since it completed, so the store (etcd, or the embedded log)
 * holds only recent and in-flight requests while `GET /status/:id` keeps answering from the archive.
 *
 * A request that still owes a webhook event (a callback URL, and an event whose delivery is not yet Delivered,
 * Gone or Abandoned) is kept however old it is: the delivery state lives in the request, and archiving it would
 * end the delivery. It goes once every delivery ends, their final states archived with it. Likewise a request
 * whose order a keeper has yet to settle (status.order Pending or Frozen): archived once the order is final.
 *
 * Archive first, then delete with the archived resourceVersion as a precondition: a crash in between
 * leaves the request in the store (archived again next time, harmless), and a change made after the archive
 * was written makes the delete fail with Conflict, so the request is read, archived and deleted again and
 * that change is never lost. Requests not yet due are requeued for the moment they are, so nothing polls.
 *
 * Run it on the leader only, next to the execution controller.
 */
export async function startRetentionController(opts: RetentionControllerOptions): Promise<RetentionController> {
  if (!(opts.retentionSeconds > 0)) throw new RangeError(`retentionSeconds must be positive, got ${opts.retentionSeconds}`);
  const retentionMs = opts.retentionSeconds * 1000;
  const namespace = opts.namespace ?? DEFAULT_NAMESPACE;
  const { store, archive } = opts;
  const ownInformer = opts.informer === undefined;
  const informer =
    opts.informer ??
    new Informer({ store, kind: 'ExecutionRequest', namespace, relistPeriodMs: 10 * 60_000, ...(opts.logger && { logger: opts.logger }) });
  const counts: RetentionStats = { archived: 0, conflicts: 0 };

  async function reconcile(ns: string, name: string): Promise<ReconcileResult> {
    const cached = informer.peek(name, ns); // read only (frozen, no copy)
    if (!cached || !isTerminal(cached.status?.phase)) return { done: true };
    if (dueAt(cached, retentionMs) > Date.now()) return { requeueAfterMs: dueAt(cached, retentionMs) - Date.now() };
    // Its completion webhook is still owed: kept until the delivery ends (the change of its state brings it back).
    if (webhookOwed(cached)) return { done: true };
    // Its order is still followed: kept until the keeper settles it (the order's change brings it back).
    if (orderOpen(cached)) return { done: true };
    // Its inclusion was found gone: what it says is about to change (to a phase it is not archived in, or a new block).
    if (opts.inclusionSuspects?.has(ns, name)) return { requeueAfterMs: SUSPECT_RECHECK_MS };

    // Due by the cache: decide again on the stored object, which the cache may trail.
    let current: ExecutionRequest;
    try {
      current = await store.get('ExecutionRequest', name, ns);
    } catch (e) {
      if (isStoreError(e, 'NotFound')) return { done: true };
      throw e;
    }
    if (!isTerminal(current.status?.phase) || current.metadata.deletionTimestamp !== undefined) return { done: true };
    const wait = dueAt(current, retentionMs) - Date.now();
    if (wait > 0) return { requeueAfterMs: wait };
    if (webhookOwed(current) || orderOpen(current)) return { done: true };

    await archive.put(current);
    await markInclusion(current);
    try {
      await store.delete('ExecutionRequest', name, {
        namespace: ns,
        ...(current.metadata.resourceVersion !== undefined && { preconditions: { resourceVersion: current.metadata.resourceVersion } }),
      });
    } catch (e) {
      if (isStoreError(e, 'NotFound')) return { done: true };
      if (isStoreError(e, 'Conflict')) {
        counts.conflicts++;
        return { requeueAfterMs: 0 };
      }
      throw e;
    }
    counts.archived++;
    return { done: true };
  }

  /** Per namespace and chain: when the newest inclusion archived completed (ms), once read or written. */
  const marked = new Map<string, number>();
  /**
   * An archived Confirmed or Reverted request newer than the chain's mark becomes it (ExecutionArchive's inclusion
   * mark: what /health checks archived statuses by). Best effort: an older mark is still a true check.
   */
  async function markInclusion(r: ExecutionRequest): Promise<void> {
    const s = r.status;
    const completed = Date.parse(s?.completionTime ?? '');
    if ((s?.phase !== 'Confirmed' && s?.phase !== 'Reverted') || s.txHash === undefined || s.blockNumber === undefined || !Number.isFinite(completed)) return;
    const ns = r.metadata.namespace ?? namespace;
    const key = `${ns}/${r.spec.chain}`;
    try {
      if (!marked.has(key)) {
        const current = await archive.inclusionMark(r.spec.chain, ns);
        marked.set(key, current === undefined ? Number.NEGATIVE_INFINITY : Date.parse(current.completionTime));
      }
      if (completed < marked.get(key)!) return;
      await archive.putInclusionMark(
        {
          chain: r.spec.chain,
          request: r.metadata.name,
          completionTime: s.completionTime!,
          txHash: s.txHash,
          blockNumber: s.blockNumber,
          ...(s.blockHash !== undefined && { blockHash: s.blockHash }),
        },
        ns,
      );
      marked.set(key, completed);
    } catch (err) {
      opts.logger?.warn({ request: r.metadata.name, chain: r.spec.chain, err }, 'the archive inclusion mark was not updated');
    }
  }

  const controller = new Controller({
    name: 'retention',
    informer,
    reconcile: ({ namespace: ns, name }) => reconcile(ns, name),
    concurrency: opts.concurrency ?? 4,
    // Only these decide whether and when a request is due; other status writes need no look.
    updatePredicate: (a, b) =>
      a.status?.phase !== b.status?.phase ||
      a.status?.completionTime !== b.status?.completionTime ||
      deliveryStates(a) !== deliveryStates(b) ||
      a.status?.order?.state !== b.status?.order?.state ||
      a.status?.payment?.credit?.usedBy !== b.status?.payment?.credit?.usedBy ||
      a.metadata.deletionTimestamp !== b.metadata.deletionTimestamp,
    ...(opts.hooks && { hooks: opts.hooks }),
    ...(opts.metrics && { metrics: opts.metrics }),
    ...(opts.logger && { logger: opts.logger }),
  });
  await controller.start();

  return {
    controller,
    stats: () => ({ ...counts }),
    async stop() {
      await controller.stop({ drain: false });
      if (ownInformer) await informer.stop();
    },
  };
}
