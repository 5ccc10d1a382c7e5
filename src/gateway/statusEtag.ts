import { createHash } from 'node:crypto';
import type { StatusRecord } from '../api/http/index.ts';

/**
 * The ETag of a status record: a hash of the record exactly as the caller receives it, so it changes whenever
 * any field the caller sees changes (and only then: a bookkeeping write that leaves the record as it was keeps
 * it). The same from the store (the plain GET) and from the gateway's cache (a wait): both present one resource.
 */
export function statusEtag(record: StatusRecord): string {
  return `"${createHash('sha256').update(JSON.stringify(record), 'utf8').digest('base64url').slice(0, 27)}"`;
}
