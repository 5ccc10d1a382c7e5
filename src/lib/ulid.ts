import { randomBytes } from 'node:crypto';

/**
 * ULIDs (https://github.com/ulid/spec) in lowercase Crockford base32: 48 bits of milliseconds, then 80 random bits,
 * so they sort by time and cannot be guessed. Lowercase, because they become Kubernetes object names.
 *
 * `ulid()` is monotonic within the process: two ids made in the same millisecond (or while the clock stepped
 * back) keep the time of the previous one and increment its random part, so they sort in the order they were
 * made. The gateway's acceptance order of one agent's requests depends on it (issue: 12 of 50 concurrent
 * requests shared a millisecond and were ordered by their random suffix).
 */
const CROCKFORD = '0123456789abcdefghjkmnpqrstvwxyz';
const TIME_DIGITS = 10;
const RANDOM_DIGITS = 16;
export const ULID_PATTERN = /^[0-9a-hjkmnp-tv-z]{26}$/;

function encodeTime(ms: number): string {
  let out = '';
  let t = Math.floor(ms);
  for (let i = 0; i < TIME_DIGITS; i++) {
    out = CROCKFORD[t % 32]! + out;
    t = Math.floor(t / 32);
  }
  return out;
}

/** 16 random base32 digits, as indexes (5 bits of each of 16 random bytes; bias-free since 256 % 32 == 0). */
function randomDigits(): number[] {
  return [...randomBytes(RANDOM_DIGITS)].map((b) => b % 32);
}

/** A ULID for the given time, not tied to any other: for tests and for encoding a known time. */
export function ulidAt(ms: number): string {
  return encodeTime(ms) + randomDigits().map((d) => CROCKFORD[d]).join('');
}

/** A generator of ULIDs that sort in the order they were made; `now` is injectable for tests. */
export function monotonicUlids(now: () => number = Date.now): () => string {
  let lastTime = -1;
  let last: number[] = [];
  return () => {
    const t = Math.floor(now());
    if (t > lastTime) {
      lastTime = t;
      last = randomDigits();
    } else {
      // Same millisecond, or the clock stepped back: the previous id's random part plus one. Its 80 bits cannot
      // overflow in practice (2^79 increments in a millisecond); if they did, time moves on by one millisecond.
      let i = RANDOM_DIGITS - 1;
      while (i >= 0 && last[i] === 31) last[i--] = 0;
      if (i >= 0) last[i]! += 1;
      else lastTime += 1;
    }
    return encodeTime(lastTime) + last.map((d) => CROCKFORD[d]).join('');
  };
}

/** The process's ULIDs: monotonic across every caller. */
export const ulid: () => string = monotonicUlids();

/** The milliseconds a ULID carries, or undefined when `id` is not one. */
export function ulidTimeMs(id: string): number | undefined {
  if (!ULID_PATTERN.test(id)) return undefined;
  let t = 0;
  for (const c of id.slice(0, TIME_DIGITS)) t = t * 32 + CROCKFORD.indexOf(c);
  return t;
}
