import { isTerminal, webhookOwed, type ExecutionRequest, type WebhookDelivery } from '../../api/v1alpha1/index.ts';
import type { AttemptResult } from '../../webhooks/deliver.ts';
import { retryDelayMs } from '../../webhooks/schedule.ts';

/**
 * The delivery state machine, as pure functions of the request and the clock: what is due, what an attempt's
 * claim writes, and what its result writes. The reconciler only reads, sends and writes what these say.
 */

export type DeliveryPlan = { kind: 'none' } | { kind: 'wait'; ms: number } | { kind: 'send' };

const iso = (ms: number): string => new Date(ms).toISOString();

/** What the request's delivery needs now. */
export function planDelivery(r: ExecutionRequest, nowMs: number): DeliveryPlan {
  if (!isTerminal(r.status?.phase) || !webhookOwed(r) || r.metadata.deletionTimestamp !== undefined) return { kind: 'none' };
  const w = r.status?.webhook;
  // Not started, or an attempt whose outcome was never recorded (a crash, a leader change): send now.
  if (w === undefined || w.state === 'Sending') return { kind: 'send' };
  if (w.state === 'Retrying') {
    const at = Date.parse(w.nextAttemptTime ?? '');
    return Number.isFinite(at) && at > nowMs ? { kind: 'wait', ms: at - nowMs } : { kind: 'send' };
  }
  return { kind: 'none' };
}

/**
 * The state an attempt claims before it sends: counted, and marked in flight. Written with the object's
 * resourceVersion as a precondition, so of two replicas that both believe they lead, one claim fails and only
 * one sends.
 */
export function claimAttempt(previous: WebhookDelivery | undefined, event: { id: string; type: string }, nowMs: number): WebhookDelivery {
  const { nextAttemptTime: _next, ...rest } = previous ?? { attempts: 0 };
  return {
    ...rest,
    id: event.id,
    event: event.type,
    state: 'Sending',
    attempts: (previous?.attempts ?? 0) + 1,
    firstAttemptTime: previous?.firstAttemptTime ?? iso(nowMs),
    lastAttemptTime: iso(nowMs),
  };
}

/** The state after a claimed attempt got `result` (not `aborted`: then nothing is written). */
export function afterAttempt(
  claimed: WebhookDelivery,
  result: Exclude<AttemptResult, { kind: 'aborted' }>,
  scheduleSeconds: readonly number[],
  nowMs: number,
  random: () => number = Math.random,
): WebhookDelivery {
  const { nextAttemptTime: _n, lastFailure: _f, lastResponseCode: _c, ...base } = claimed;
  switch (result.kind) {
    case 'delivered':
      return { ...base, state: 'Delivered', lastResponseCode: result.statusCode, deliveredTime: iso(nowMs) };
    case 'gone':
      return {
        ...base,
        state: 'Gone',
        lastResponseCode: result.statusCode,
        lastFailure: { cause: 'gone', message: `HTTP ${result.statusCode}: the endpoint is gone; not tried again` },
      };
    case 'failed': {
      const failed = {
        ...base,
        ...(result.statusCode !== undefined && { lastResponseCode: result.statusCode }),
        lastFailure: { cause: result.cause, message: result.message },
      };
      const delay = retryDelayMs(claimed.attempts, scheduleSeconds, { retryAfterMs: result.retryAfterMs, random });
      if (delay === undefined) return { ...failed, state: 'Abandoned' };
      return { ...failed, state: 'Retrying', nextAttemptTime: iso(nowMs + delay) };
    }
  }
}
