import type { UintBounds, ValueCondition } from '../api/v1alpha1/index.ts';

/** Whether `v` meets every bound given (an empty set of bounds always holds). */
export function meetsUintBounds(v: bigint, b: UintBounds): boolean {
  return (
    (b.eq === undefined || v === BigInt(b.eq)) &&
    (b.lt === undefined || v < BigInt(b.lt)) &&
    (b.lte === undefined || v <= BigInt(b.lte)) &&
    (b.gt === undefined || v > BigInt(b.gt)) &&
    (b.gte === undefined || v >= BigInt(b.gte))
  );
}

/** Whether a condition's numeric bounds are decimals the evaluator can compare (checked when a rule is compiled). */
export const numericBoundsValid = (c: ValueCondition): boolean => [c.lt, c.lte, c.gt, c.gte].every((b) => b === undefined || decimal(b) !== undefined);

/**
 * Whether `value` (a decoded argument or an input field) meets `c`: true, false, or undefined when it cannot be
 * told (the value is missing, or not a number under a numeric bound), which the rule decides (rules.ts). Numbers
 * compare exactly as decimals; text without regard to case (addresses, token symbols).
 */
export function meetsValueCondition(value: unknown, c: ValueCondition): boolean | undefined {
  if (value === undefined || value === null) return undefined;
  const text = asText(value);
  if (c.eq !== undefined && !sameText(text, c.eq)) return false;
  if (c.ne !== undefined && sameText(text, c.ne)) return false;
  if (c.in !== undefined && !c.in.some((x) => sameText(text, x))) return false;
  if (c.notIn !== undefined && c.notIn.some((x) => sameText(text, x))) return false;
  const bounds = [c.lt, c.lte, c.gt, c.gte];
  if (bounds.every((b) => b === undefined)) return true;
  const n = decimal(text);
  if (n === undefined) return undefined;
  const cmp = (bound: string | undefined, ok: (d: number) => boolean) => {
    if (bound === undefined) return true;
    const b = decimal(bound);
    return b !== undefined && ok(compareDecimals(n, b));
  };
  return cmp(c.lt, (d) => d < 0) && cmp(c.lte, (d) => d <= 0) && cmp(c.gt, (d) => d > 0) && cmp(c.gte, (d) => d >= 0);
}

/** A value as the text conditions compare: bigints and numbers in decimal, booleans as true/false, the rest as JSON. */
export function asText(value: unknown): string {
  if (typeof value === 'string') return value;
  if (typeof value === 'bigint' || typeof value === 'number' || typeof value === 'boolean') return String(value);
  return JSON.stringify(value, (_, v: unknown) => (typeof v === 'bigint' ? v.toString() : v));
}

const sameText = (a: string, b: string) => a.toLowerCase() === b.toLowerCase();

/** A decimal as (sign, digits scaled to 36 places): exact, unlike a float. */
interface Decimal {
  negative: boolean;
  scaled: bigint;
}
const PLACES = 36;
const DECIMAL = /^(-)?(0|[1-9][0-9]*)(?:\.([0-9]+))?$/;

function decimal(text: string): Decimal | undefined {
  const m = DECIMAL.exec(text.trim());
  if (!m || m[2]!.length > 80 || (m[3]?.length ?? 0) > PLACES) return undefined;
  const scaled = BigInt(m[2]! + (m[3] ?? '').padEnd(PLACES, '0'));
  return { negative: m[1] === '-' && scaled !== 0n, scaled };
}

function compareDecimals(a: Decimal, b: Decimal): number {
  const av = a.negative ? -a.scaled : a.scaled;
  const bv = b.negative ? -b.scaled : b.scaled;
  return av < bv ? -1 : av > bv ? 1 : 0;
}
