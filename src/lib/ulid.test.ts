import { describe, expect, it } from 'vitest';
import { monotonicUlids, ulidAt, ulidTimeMs, ULID_PATTERN } from './ulid.ts';

describe('ULIDs', () => {
  it('carry their time and sort by it', () => {
    const a = ulidAt(1_700_000_000_000);
    const b = ulidAt(1_700_000_000_001);
    expect(a).toMatch(ULID_PATTERN);
    expect(ulidTimeMs(a)).toBe(1_700_000_000_000);
    expect(a < b).toBe(true);
    expect(ulidTimeMs('not-a-ulid')).toBeUndefined();
  });

  it('made in one millisecond sort in the order they were made', () => {
    const next = monotonicUlids(() => 1_700_000_000_000);
    const ids = Array.from({ length: 1_000 }, next);
    expect([...ids].sort()).toEqual(ids);
    expect(new Set(ids).size).toBe(ids.length);
    expect(ids.every((id) => ulidTimeMs(id) === 1_700_000_000_000)).toBe(true);
  });

  it('stay ordered when the clock steps back', () => {
    const times = [2_000, 2_000, 1_000, 1_500, 2_001];
    const next = monotonicUlids(() => times.shift()!);
    const ids = Array.from({ length: 5 }, next);
    expect([...ids].sort()).toEqual(ids);
    expect(ids.map((id) => ulidTimeMs(id))).toEqual([2_000, 2_000, 2_000, 2_000, 2_001]);
  });

  it('carry into the next digit when a random digit is at its maximum', () => {
    // Random parts are random; drive enough increments in one millisecond that carries certainly happen.
    const next = monotonicUlids(() => 5);
    let prev = next();
    for (let i = 0; i < 5_000; i++) {
      const id = next();
      expect(id > prev).toBe(true);
      prev = id;
    }
  });
});
