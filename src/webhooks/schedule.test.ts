import { describe, expect, it } from 'vitest';
import { DEFAULT_RETRY_SCHEDULE_SECONDS, maxAttempts, parseRetryAfter, retryDelayMs, validateSchedule } from './schedule.ts';

describe('the retry schedule', () => {
  it('by default spans more than 72 hours over ten attempts, whatever the jitter draws', () => {
    expect(maxAttempts(DEFAULT_RETRY_SCHEDULE_SECONDS)).toBe(10);
    for (const draw of [0, 0.5, 0.999]) {
      let total = 0;
      for (let failed = 1; ; failed++) {
        const d = retryDelayMs(failed, DEFAULT_RETRY_SCHEDULE_SECONDS, { random: () => draw });
        if (d === undefined) {
          expect(failed).toBe(10); // the tenth failure ends it
          break;
        }
        total += d;
      }
      expect(total).toBeGreaterThanOrEqual(72 * 3600 * 1000);
      expect(total).toBeLessThanOrEqual(1.1 * 75.6 * 3600 * 1000);
    }
  });

  it('grows between steps and stretches each by at most 10 % of jitter, never shortens it', () => {
    const low = DEFAULT_RETRY_SCHEDULE_SECONDS.map((_, i) => retryDelayMs(i + 1, DEFAULT_RETRY_SCHEDULE_SECONDS, { random: () => 0 })!);
    const high = DEFAULT_RETRY_SCHEDULE_SECONDS.map((_, i) => retryDelayMs(i + 1, DEFAULT_RETRY_SCHEDULE_SECONDS, { random: () => 0.9999 })!);
    expect(low).toEqual(DEFAULT_RETRY_SCHEDULE_SECONDS.map((s) => s * 1000));
    for (let i = 1; i < low.length; i++) expect(low[i]).toBeGreaterThan(low[i - 1]!);
    high.forEach((h, i) => expect(h / low[i]!).toBeCloseTo(1.1, 3));
  });

  it('honours Retry-After: never sooner, up to a day', () => {
    const schedule = [1, 2, 3];
    expect(retryDelayMs(1, schedule, { retryAfterMs: 2_500, random: () => 0 })).toBe(2_500);
    expect(retryDelayMs(1, schedule, { retryAfterMs: 10, random: () => 0 })).toBe(1_000);
    expect(retryDelayMs(1, schedule, { retryAfterMs: 3 * 86_400_000, random: () => 0 })).toBe(86_400_000);
    expect(retryDelayMs(4, schedule, { retryAfterMs: 10 })).toBeUndefined(); // four attempts in all
  });

  it('reads Retry-After in seconds or as an HTTP date', () => {
    const now = Date.parse('2026-11-02T10:00:00Z');
    expect(parseRetryAfter('120', now)).toBe(120_000);
    expect(parseRetryAfter(' 0 ', now)).toBe(0);
    expect(parseRetryAfter('Mon, 02 Nov 2026 10:01:00 GMT', now)).toBe(60_000);
    expect(parseRetryAfter('Mon, 02 Nov 2026 09:00:00 GMT', now)).toBe(0);
    for (const bad of [undefined, '', '-5', '1.5', 'soon', '12 34']) expect(parseRetryAfter(bad, now)).toBeUndefined();
  });

  it('refuses an empty schedule and delays no timer can hold', () => {
    expect(validateSchedule([])).toMatch(/at least one/);
    expect(validateSchedule([5, 0])).toMatch(/between/);
    expect(validateSchedule([30 * 86_400])).toMatch(/between/);
    expect(validateSchedule([0.05, 60])).toBeUndefined();
  });
});
