import type { ExecutionPhase, ExecutionRequest } from '../../api/v1alpha1/index.ts';
import type { ChainWorker } from '../../chain/types.ts';
import type { ChainName } from '../../config/chains.ts';
import type { Logger } from '../../lib/logger.ts';
import type { InclusionCheckTrigger } from '../../metrics/registry.ts';
import { cacheKey } from '../../runtime/informer.ts';

/**
 * Finds finished requests whose inclusion is no longer where their status says: a devnet killed with its last
 * blocks unsaved, a chain reset to an earlier state, a reorg deeper than the confirmation depth. Cheap by
 * construction: it looks transactions up (one receipt each, batched), and leaves the verdict to the execution
 * reconciler (inclusionJudge.ts), which gets only the suspects.
 *
 * How far back. A chain is a hash chain: a block still where the store recorded it vouches for every block below
 * it, and so for every inclusion recorded below it on the same chain. Each look at a chain therefore splits its
 * recorded inclusions in two:
 *   fresh    completed since the previous look (at the leader's start: within `freshWindowMs` of the newest
 *            completion, what no look may have covered): each is looked up, since a chain rewound meanwhile
 *            may have recorded some on blocks it then lost and others on the blocks that replaced them
 *   settled  all the others, which an earlier look found on one chain: walked from the highest block down, in
 *            batches, to the first one still in place (`minChecks` at least at a start, against a reorg that
 *            left an older inclusion behind a newer one; one at a periodic look, the check-point)
 * A look costs one receipt per chain plus the new inclusions when nothing changed, and as many as were lost when
 * something did: the requests of the blocks since the devnet's last snapshot after a kill, every request of the
 * chain the store holds after a reset. The store holds finished requests for their retention only (1 h by
 * default), so `maxChecks` (10,000 per chain and look) is a guard, not the bound. Requests already archived are
 * beyond it: see docs/api.md.
 */

/** Finished requests whose inclusion a scan found changed: the reconciler looks at each once (inclusionJudge.ts). */
export class InclusionSuspects {
  readonly #keys = new Set<string>();
  readonly #listeners = new Set<(namespace: string, name: string) => void>();

  /** Adds a suspect; false when it already was one (it is being judged). */
  add(namespace: string, name: string): boolean {
    const key = cacheKey(namespace, name);
    if (this.#keys.has(key)) return false;
    this.#keys.add(key);
    for (const l of this.#listeners) l(namespace, name);
    return true;
  }
  has(namespace: string, name: string): boolean {
    return this.#keys.has(cacheKey(namespace, name));
  }
  delete(namespace: string, name: string): void {
    this.#keys.delete(cacheKey(namespace, name));
  }
  keys(): { namespace: string; name: string }[] {
    return [...this.#keys].map((k) => {
      const i = k.indexOf('/');
      return { namespace: k.slice(0, i), name: k.slice(i + 1) };
    });
  }
  get size(): number {
    return this.#keys.size;
  }
  /** Calls `listener` for every suspect added from now on; returns an unsubscribe. */
  onAdd(listener: (namespace: string, name: string) => void): () => void {
    this.#listeners.add(listener);
    return () => this.#listeners.delete(listener);
  }
}

const INCLUDED: ReadonlySet<ExecutionPhase | undefined> = new Set(['Confirmed', 'Reverted']);

/** A finished request that recorded an inclusion (a tx hash and a signed operation to look up). */
export const hasRecordedInclusion = (r: ExecutionRequest): boolean =>
  INCLUDED.has(r.status?.phase) && r.status?.txHash !== undefined && r.status.userOperation !== undefined;

const blockOf = (r: ExecutionRequest): bigint => {
  try {
    return BigInt(r.status?.blockNumber ?? '0');
  } catch {
    return 0n;
  }
};

/**
 * Whether the chain still has `r`'s transaction in the block its status names (in some block when no block hash
 * was recorded). A missing receipt and another block are the same to the caller: the reconciler decides.
 */
export async function inclusionIntact(worker: Pick<ChainWorker, 'getTransactionReceipt'>, r: ExecutionRequest): Promise<boolean> {
  const s = r.status!;
  const receipt = await worker.getTransactionReceipt(s.txHash as `0x${string}`);
  if (!receipt) return false;
  if (s.blockHash === undefined) return s.blockNumber === undefined || receipt.blockNumber === BigInt(s.blockNumber);
  return receipt.blockHash.toLowerCase() === s.blockHash.toLowerCase();
}

export interface InclusionAuditOptions {
  /** The finished requests of `chain` with a recorded inclusion (the informer's index), in any order. */
  inclusions(chain: ChainName): readonly ExecutionRequest[];
  workers: ReadonlyMap<ChainName, ChainWorker>;
  suspects: InclusionSuspects;
  /** Settled inclusions looked at at a start however soon one is in place (default 8). */
  minChecks?: number;
  /** At most this many per chain and look (default 10,000); the next look carries on. */
  maxChecks?: number;
  /** Receipts asked for at once (default 25): the worker's transport batches them into one JSON-RPC call. */
  batchSize?: number;
  /** At a start, inclusions completed this close to the newest one are each looked up (default 90 s: a look's period and slack). */
  freshWindowMs?: number;
  /** Overlap between looks, for completions written while one ran (default 60 s). */
  slackMs?: number;
  now?: () => number;
  onChecked?: (chain: ChainName, trigger: InclusionCheckTrigger, n: number) => void;
  logger?: Logger | undefined;
}

export interface ScanReport {
  chain: ChainName;
  /** Inclusions looked up. */
  checked: number;
  /** Requests found changed (suspects now). */
  changed: number;
  /** Of those, the ones not already suspects (being judged since an earlier look). */
  newlyChanged: number;
  /** The walk down the settled inclusions reached one still in place (it vouches for the rest). */
  reachedIntact: boolean;
  /** Settled inclusions existed, and none was still in place: the chain lost more than the store holds. */
  lostAll: boolean;
  /** It stopped at maxChecks with more to look at. */
  truncated: boolean;
  ms: number;
}

export interface InclusionAudit {
  /**
   * Looks at `chain`'s recorded inclusions (the fresh ones each, the settled ones down to one in place); changed
   * ones become suspects. `start` looks as a new leader does, `watch` from where the previous look left off.
   */
  scan(chain: ChainName, trigger: InclusionCheckTrigger): Promise<ScanReport>;
}

const completionOf = (r: ExecutionRequest): number => {
  const t = Date.parse(r.status?.completionTime ?? '');
  return Number.isFinite(t) ? t : 0;
};

export function createInclusionAudit(opts: InclusionAuditOptions): InclusionAudit {
  const minChecks = opts.minChecks ?? 8;
  const maxChecks = opts.maxChecks ?? 10_000;
  const batchSize = opts.batchSize ?? 25;
  const freshWindowMs = opts.freshWindowMs ?? 90_000;
  const slackMs = opts.slackMs ?? 60_000;
  const now = opts.now ?? (() => Date.now());
  /** Per chain: inclusions completed from this time on are fresh at the next look. */
  const freshSince = new Map<ChainName, number>();
  const workerOf = (chain: ChainName): ChainWorker => {
    const w = opts.workers.get(chain);
    if (!w) throw new Error(`no chain worker serves ${chain}`);
    return w;
  };

  async function scan(chain: ChainName, trigger: InclusionCheckTrigger): Promise<ScanReport> {
    const started = now();
    const worker = workerOf(chain);
    // A head sample at every look, even with nothing recorded to look up: a worker that sees the head go down
    // knows the chain rewound (its nonces are read again; its inclusions above the head are gone).
    await worker.getHead();
    const all = opts.inclusions(chain);
    const since =
      trigger === 'start' || !freshSince.has(chain) ? all.reduce((m, r) => Math.max(m, completionOf(r)), 0) - freshWindowMs : freshSince.get(chain)!;
    const fresh = all.filter((r) => completionOf(r) >= since);
    const settled = all.filter((r) => completionOf(r) < since).sort((a, b) => (blockOf(b) > blockOf(a) ? 1 : blockOf(b) < blockOf(a) ? -1 : 0));
    const report: ScanReport = { chain, checked: 0, changed: 0, newlyChanged: 0, reachedIntact: false, lostAll: false, truncated: false, ms: 0 };

    /** Looks `batch` up; returns whether one of them is in place. */
    const check = async (batch: readonly ExecutionRequest[]): Promise<boolean> => {
      const intact = await Promise.all(batch.map((r) => inclusionIntact(worker, r)));
      report.checked += batch.length;
      opts.onChecked?.(chain, trigger, batch.length);
      batch.forEach((r, j) => {
        if (intact[j]) return;
        report.changed++;
        if (opts.suspects.add(r.metadata.namespace ?? 'default', r.metadata.name)) report.newlyChanged++;
      });
      return intact.some(Boolean);
    };
    const room = () => maxChecks - report.checked;

    for (let i = 0; i < fresh.length && room() > 0; i += batchSize) await check(fresh.slice(i, i + Math.min(batchSize, room())));
    const walkMin = trigger === 'start' ? minChecks : 1;
    let walked = 0;
    for (let i = 0; i < settled.length && room() > 0; ) {
      // The check-point first, alone: at a periodic look it is all there is to do when nothing changed.
      const n = Math.min(i === 0 ? walkMin : batchSize, room());
      const batch = settled.slice(i, i + n);
      if (await check(batch)) report.reachedIntact = true;
      i += batch.length;
      walked += batch.length;
      if (report.reachedIntact && walked >= walkMin) break;
    }
    report.truncated = report.checked < fresh.length + settled.length && room() <= 0;
    report.lostAll = settled.length > 0 && !report.reachedIntact && !report.truncated;
    // What completes from now on is fresh at the next look (with an overlap for writes made while this one ran).
    if (!report.truncated) freshSince.set(chain, started - slackMs);
    report.ms = now() - started;

    if (report.newlyChanged > 0) {
      opts.logger?.error(
        { chain, trigger, checked: report.checked, changed: report.changed },
        `CHAIN HISTORY MISMATCH on ${chain}: ${report.newlyChanged} finished request(s) are not included where their status says; each is looked at again`,
      );
    }
    if (report.truncated) {
      opts.logger?.error({ chain, maxChecks }, `the inclusion check of ${chain} stopped after ${maxChecks} requests with more to look at; the next look carries on`);
    } else if (report.lostAll) {
      opts.logger?.error(
        { chain },
        `${chain} no longer holds any inclusion the store recorded (a chain reset): requests archived before them may claim inclusions the chain no longer has, and their archived status is not corrected (docs/api.md)`,
      );
    }
    return report;
  }

  return { scan };
}
