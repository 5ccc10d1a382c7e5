import type { StatusRecord } from '../api/http/index.ts';

/** A step's time after the previous one, short: `+45 ms`, `+1.2 s`, `+3 min`. */
function after(ms: number): string {
  if (ms < 1_000) return `+${ms} ms`;
  if (ms < 60_000) return `+${(ms / 1000).toFixed(1)} s`;
  return `+${(ms / 60_000).toFixed(1)} min`;
}

/**
 * A request's history on one line, each state with the time it took to get there from the one before:
 * `pending → queued +45 ms → broadcasting +3 ms → confirmed +1.2 s`. Empty when there is none (an old service).
 */
export function historyLine(s: Pick<StatusRecord, 'history'>): string {
  const h = s.history ?? [];
  return h
    .map((step, i) => (i === 0 ? step.status : `${step.status} ${after(Math.max(0, Date.parse(step.at) - Date.parse(h[i - 1]!.at)))}`))
    .join(' → ');
}
