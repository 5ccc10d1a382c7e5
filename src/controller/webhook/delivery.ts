import type { ExecutionRequest, WebhookEventRecord } from '../../api/v1alpha1/index.ts';
import type { AttemptResult } from '../../webhooks/deliver.ts';
import { nextOwedIndex, owedDeliveries } from '../../webhooks/eventLog.ts';
import { retryDelayMs } from '../../webhooks/schedule.ts';

/**
 * The delivery state machine, as pure functions of the request and the clock: which event is due and when, what
 * an attempt's claim writes, and what its result writes. The reconciler only reads, sends and writes what these
 * say. A request's events go in order: the next one is not attempted before the one ahead of it is final.
 */

export type DeliveryPlan = { kind: 'none' } | { kind: 'wait'; ms: number; index: number } | { kind: 'send'; index: number };

const iso = (ms: number): string => new Date(ms).toISOString();

/** What the request's deliveries need now: nothing, the next event (by its index) now, or after a wait. */
export function planDelivery(r: ExecutionRequest, nowMs: number): DeliveryPlan {
  if (r.metadata.deletionTimestamp !== undefined) return { kind: 'none' };
  const index = nextOwedIndex(r);
  if (index < 0) return { kind: 'none' };
  const d = owedDeliveries(r)[index]!;
  // Not started, or an attempt whose outcome was never recorded (a crash, a leader change): send now.
  if (d.state === undefined || d.state === 'Sending') return { kind: 'send', index };
  const at = Date.parse(d.nextAttemptTime ?? '');
  return Number.isFinite(at) && at > nowMs ? { kind: 'wait', ms: at - nowMs, index } : { kind: 'send', index };
}

/**
 * The state an attempt claims before it sends: counted, and marked in flight. Written with the object's
 * resourceVersion as a precondition, so of two replicas that both believe they lead, one claim fails and only
 * one sends.
 */
export function claimAttempt(event: WebhookEventRecord, nowMs: number): WebhookEventRecord {
  const { nextAttemptTime: _next, ...rest } = event;
  return {
    ...rest,
    state: 'Sending',
    attempts: event.attempts + 1,
    firstAttemptTime: event.firstAttemptTime ?? iso(nowMs),
    lastAttemptTime: iso(nowMs),
  };
}

/** The state after a claimed attempt got `result` (not `aborted`: then nothing is written). */
export function afterAttempt(
  claimed: WebhookEventRecord,
  result: Exclude<AttemptResult, { kind: 'aborted' }>,
  scheduleSeconds: readonly number[],
  nowMs: number,
  random: () => number = Math.random,
): WebhookEventRecord {
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
