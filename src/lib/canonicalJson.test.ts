import { describe, expect, it } from 'vitest';
import { canonicalJson } from './canonicalJson.ts';

describe('canonicalJson', () => {
  it('orders keys at every depth, and keeps array order', () => {
    expect(canonicalJson({ b: 1, a: { d: [2, { y: 1, x: 0 }], c: null } })).toBe('{"a":{"c":null,"d":[2,{"x":0,"y":1}]},"b":1}');
    expect(canonicalJson({ a: 1, b: 2 })).toBe(canonicalJson({ b: 2, a: 1 }));
  });

  it('treats an undefined field as absent', () => {
    expect(canonicalJson({ a: 1, b: undefined })).toBe(canonicalJson({ a: 1 }));
  });

  it('refuses what JSON cannot say rather than dropping it', () => {
    expect(() => canonicalJson({ a: 1n })).toThrow(/bigint/);
    expect(() => canonicalJson([undefined])).toThrow(/undefined in an array/);
  });
});
