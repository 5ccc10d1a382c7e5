/**
 * Every distinct label value is a time series Prometheus keeps, so label values must come from small sets.
 * Values taken from code (phases, chains, results) are bounded by it; values taken from data (an error's code,
 * a lock key's prefix, a gRPC method) go through a BoundedLabel, so a bug or a hostile input can never turn
 * into one new series per request.
 */
export const OTHER = 'other';

const PLAIN = /^[A-Za-z][A-Za-z0-9_.\-/]{0,79}$/;

/** Passes through the first `max` distinct well-formed values it sees; anything else becomes `other`. */
export class BoundedLabel {
  readonly #seen = new Set<string>();

  constructor(
    private readonly max: number,
    private readonly pattern: RegExp = PLAIN,
  ) {}

  value(v: string): string {
    if (this.#seen.has(v)) return v;
    if (this.#seen.size >= this.max || !this.pattern.test(v)) return OTHER;
    this.#seen.add(v);
    return v;
  }
}

/** The `code` of an error for a label: AgentWalletError and Node's system errors carry one; else `unknown`. */
export function errorCode(e: unknown): string {
  if (e !== null && typeof e === 'object' && 'code' in e && typeof e.code === 'string' && e.code !== '') return e.code;
  return 'unknown';
}
