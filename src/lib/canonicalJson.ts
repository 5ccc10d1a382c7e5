/**
 * JSON with object keys in sorted order at every depth, so equal values hash equally whatever order a caller
 * wrote them in. Only JSON values: a bigint, function or undefined inside an array is refused, not dropped.
 */
export function canonicalJson(value: unknown): string {
  return JSON.stringify(sortKeys(value));
}

function sortKeys(value: unknown): unknown {
  if (Array.isArray(value)) {
    return value.map((v) => {
      if (v === undefined || typeof v === 'function' || typeof v === 'bigint') throw new TypeError(`canonicalJson: ${typeof v} in an array`);
      return sortKeys(v);
    });
  }
  if (typeof value === 'bigint') throw new TypeError('canonicalJson: bigint is not JSON');
  if (value === null || typeof value !== 'object') return value;
  const out: Record<string, unknown> = {};
  for (const key of Object.keys(value).sort()) {
    const v = (value as Record<string, unknown>)[key];
    if (v !== undefined) out[key] = sortKeys(v); // absent and undefined are the same field
  }
  return out;
}
