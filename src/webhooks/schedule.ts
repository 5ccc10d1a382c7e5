/**
 * When a failed delivery is tried again. The default is Standard Webhooks' example schedule: the first attempt
 * at once, then after 5 s, 5 min, 30 min, 2 h, 5 h, 10 h, 14 h, 20 h and 24 h: ten attempts over 75 h 35 min,
 * so a receiver that is down for a long weekend still gets every event. Each delay is stretched by up to
 * +10 % of jitter (only ever longer, so the schedule never ends sooner than its sum), which spreads the retries
 * of many deliveries that failed together (an endpoint's outage) instead of sending them back in one burst.
 */
export const DEFAULT_RETRY_SCHEDULE_SECONDS: readonly number[] = [5, 300, 1_800, 7_200, 18_000, 36_000, 50_400, 72_000, 86_400];
/** A delay beyond this could not be a timer (Node's setTimeout holds up to 24.8 days). */
export const MAX_RETRY_DELAY_SECONDS = 7 * 86_400;
const JITTER = 0.1;
/** The longest Retry-After honoured: a receiver asking for more is tried again after a day. */
export const MAX_RETRY_AFTER_MS = 24 * 3600 * 1000;

export interface RetryOptions {
  /** The receiver's Retry-After, in ms from now: never retried sooner (up to MAX_RETRY_AFTER_MS). */
  retryAfterMs?: number | undefined;
  /** In [0, 1): the jitter's draw (default Math.random; tests pass a fixed one). */
  random?: () => number;
}

/** Attempts in all under a schedule: the first, then one per delay. */
export const maxAttempts = (scheduleSeconds: readonly number[]): number => scheduleSeconds.length + 1;

/**
 * The delay before the attempt after `attempts` failed ones, or undefined when the schedule is exhausted and
 * the delivery is abandoned.
 */
export function retryDelayMs(attempts: number, scheduleSeconds: readonly number[], opts: RetryOptions = {}): number | undefined {
  if (attempts < 1) return 0;
  const step = scheduleSeconds[attempts - 1];
  if (step === undefined) return undefined;
  const jittered = step * 1000 * (1 + JITTER * (opts.random ?? Math.random)());
  const retryAfter = Math.min(opts.retryAfterMs ?? 0, MAX_RETRY_AFTER_MS);
  return Math.round(Math.max(jittered, retryAfter));
}

/** A Retry-After header (delay-seconds or an HTTP-date) as ms from `nowMs`; undefined when absent or unreadable. */
export function parseRetryAfter(value: string | undefined, nowMs: number): number | undefined {
  if (value === undefined) return undefined;
  const v = value.trim();
  if (/^[0-9]{1,10}$/.test(v)) return Number(v) * 1000;
  const at = Date.parse(v);
  if (!Number.isFinite(at) || !/[a-zA-Z]/.test(v)) return undefined;
  return Math.max(0, at - nowMs);
}

/** Checks an operator's schedule: at least one delay, each positive and at most MAX_RETRY_DELAY_SECONDS. */
export function validateSchedule(scheduleSeconds: readonly number[]): string | undefined {
  if (scheduleSeconds.length === 0) return 'the retry schedule needs at least one delay';
  const bad = scheduleSeconds.find((s) => !(s > 0) || s > MAX_RETRY_DELAY_SECONDS);
  if (bad !== undefined) return `retry delays must be between 0 and ${MAX_RETRY_DELAY_SECONDS} s; got ${bad}`;
  return undefined;
}
