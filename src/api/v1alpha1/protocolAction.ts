import { createHash } from 'node:crypto';
import { canonicalJson } from '../../lib/canonicalJson.ts';

/**
 * The hash an action is matched by (an Idempotency-Key retry, a paid resend): its name and the caller's input as
 * the family's schema normalized it, in canonical JSON (key order never matters).
 */
export function protocolActionHash(name: string, input: Record<string, unknown>): string {
  return createHash('sha256').update(`${name}\n${canonicalJson(input)}`, 'utf8').digest('hex');
}
