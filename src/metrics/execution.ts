import { isTerminal, type ExecutionPhase, type ExecutionRequest } from '../api/v1alpha1/index.ts';
import type { ChainName } from '../config/chains.ts';
import { cacheKey, type Informer } from '../runtime/informer.ts';
import type { Metrics } from './registry.ts';

/**
 * The informer index `instrumentExecutionInformer` counts with: `<chain>/<phase>` of each request (a new
 * request without a phase counts as Pending, as the API reports it). Add it to the informer's indexers.
 */
export const PHASE_INDEX = 'metricsPhaseByChain';
export const phaseIndexer = (r: ExecutionRequest): string[] => [`${r.spec.chain}/${phaseOf(r)}`];

const phaseOf = (r: ExecutionRequest): ExecutionPhase => r.status?.phase ?? 'Pending';

export interface ExecutionInformerMetricsOptions {
  /** The chains to report (a series per chain and phase, zeros included). */
  chains: readonly ChainName[];
  /** When the gateway accepted the request (ms since the epoch), if known; else creationTimestamp is used. */
  acceptedAt?: (r: ExecutionRequest) => number | undefined;
}

/**
 * Feeds the request metrics from the execution controller's informer:
 * - `agentwallet_execution_requests{phase,chain}` is counted from the informer's cache at each scrape (through
 *   PHASE_INDEX), so it cannot drift from what the controller sees the way a second set of counters could;
 * - `agentwallet_execution_phase_duration_seconds` is observed when a request leaves a phase: the time since
 *   the informer saw it enter that phase (Pending: since acceptance). A phase entered before this process was
 *   watching is not observed, and a phase the watch skipped over (A→B→C seen as A→C) counts towards A;
 * - `agentwallet_execution_duration_seconds{outcome}` is observed when a request reaches a terminal phase:
 *   completionTime − acceptance, both from the object itself.
 *
 * Attach it only while this process is the leading controller (every replica's informer sees the same
 * transitions: two observers would count each twice). Returns a function that detaches both.
 */
export function instrumentExecutionInformer(
  metrics: Metrics,
  informer: Informer<'ExecutionRequest'>,
  opts: ExecutionInformerMetricsOptions,
): () => void {
  informer.countByIndex(PHASE_INDEX, ''); // throws now, not at the first scrape, when the index is missing
  const detachGauge = metrics.countExecutionRequestsWith(
    (phase, chain) => informer.countByIndex(PHASE_INDEX, `${chain}/${phase}`),
    opts.chains,
  );

  const acceptedAt = (r: ExecutionRequest): number | undefined => {
    const t = opts.acceptedAt?.(r) ?? Date.parse(r.metadata.creationTimestamp ?? '');
    return Number.isFinite(t) ? t : undefined;
  };
  /** The phase each non-terminal request is in, and since when (undefined: entered before we watched). */
  const entered = new Map<string, { phase: ExecutionPhase; since: number | undefined }>();
  const keyOf = (r: ExecutionRequest) => cacheKey(r.metadata.namespace, r.metadata.name);

  const removeHandler = informer.addEventHandler({
    onAdd(r) {
      const phase = phaseOf(r);
      if (!isTerminal(phase)) entered.set(keyOf(r), { phase, since: phase === 'Pending' ? acceptedAt(r) : undefined });
    },
    onUpdate(old, r) {
      const key = keyOf(r);
      const phase = phaseOf(r);
      const prev = entered.get(key) ?? { phase: phaseOf(old), since: undefined };
      if (phase === prev.phase) return;
      const now = Date.now();
      const chain = r.spec.chain;
      if (prev.since !== undefined) {
        // Phases the request went through without a write of their own (a fast outcome skips Broadcasting's,
        // src/controller/execution/phases/submit.ts) are in its history: each ends the one before it.
        let from = prev;
        for (const h of passedThrough(r, prev.phase, phase)) {
          const at = Date.parse(h.time);
          if (!Number.isFinite(at)) continue;
          metrics.phaseDuration.observe({ phase: from.phase, chain }, Math.max(0, at - from.since!) / 1000);
          from = { phase: h.phase, since: at };
        }
        metrics.phaseDuration.observe({ phase: from.phase, chain }, Math.max(0, now - from.since!) / 1000);
      }
      if (!isTerminal(phase)) {
        entered.set(key, { phase, since: now });
        return;
      }
      entered.delete(key);
      const start = acceptedAt(r);
      if (isTerminal(prev.phase) || start === undefined) return;
      const end = Date.parse(r.status?.completionTime ?? '');
      metrics.executionDuration.observe({ outcome: phase, chain }, Math.max(0, (Number.isFinite(end) ? end : now) - start) / 1000);
    },
    onDelete(r) {
      entered.delete(keyOf(r));
    },
  });

  return () => {
    removeHandler();
    detachGauge();
    entered.clear();
  };
}

/** The history entries between leaving `from` and entering `to` (the phases passed through in one write). */
function passedThrough(r: ExecutionRequest, from: ExecutionPhase, to: ExecutionPhase): { phase: ExecutionPhase; time: string }[] {
  const h = r.status?.history ?? [];
  const end = h.length - 1;
  if (end < 0 || h[end]!.phase !== to) return [];
  let start = end - 1;
  while (start >= 0 && h[start]!.phase !== from) start--;
  return start < 0 ? [] : h.slice(start + 1, end);
}
