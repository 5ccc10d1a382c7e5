import type { AnyResource, Kind } from '../../api/v1alpha1/index.ts';
import { KINDS } from '../../api/v1alpha1/index.ts';
import type { WatchEventType } from '../types.ts';

/**
 * What one log record says, and how replay turns it back into the object it wrote. A record logs only what
 * replay cannot derive from the object before it (the record of the same key at an earlier revision, or the
 * snapshot):
 *
 * - `put`: the whole object (create, update, and a delete that completes by removing the last finalizer).
 * - `status`: an updateStatus, which changes only status and resourceVersion. Status is logged key by key in
 *   order, with the value only where it differs from the status before; an unchanged key is named alone.
 *   The three status writes of a request repeat its signed UserOperation; this logs it once.
 * - `delete`: a delete of an object without finalizers, whose last state is the object before it.
 *
 * Encoded as a JSON array: `[rev,"A"|"M"|"D",object]`, `[rev,"S",kind,namespace,name,status]` (status is
 * `[[key,value] | [key], …]`, or null when the write removed it), `[rev,"X",kind,namespace,name]`.
 * Version 1 logs held `{rev,type,kind,namespace,name,object}` objects, read as `put`s.
 */
export type WalRecord =
  | { rev: number; op: 'put'; type: WatchEventType; object: AnyResource }
  | { rev: number; op: 'status'; kind: Kind; namespace: string; name: string; status: StatusDelta | null }
  | { rev: number; op: 'delete'; kind: Kind; namespace: string; name: string };

/** A status, key by key in its order: `[key, value]` where it changed, `[key]` where it is the previous value. */
export type StatusDelta = ([string, unknown] | [string])[];

const PUT_CODES = { ADDED: 'A', MODIFIED: 'M', DELETED: 'D' } as const satisfies Record<WatchEventType, string>;
const PUT_TYPES: Readonly<Record<string, WatchEventType>> = { A: 'ADDED', M: 'MODIFIED', D: 'DELETED' };

/** `objectJson` is the object as stored, already serialized. */
export function encodePut(rev: number, type: WatchEventType, objectJson: string): string {
  return `[${rev},"${PUT_CODES[type]}",${objectJson}]`;
}

/** The updateStatus that turned `prev` into `next` (both status objects, or undefined when absent). */
export function encodeStatus(
  rev: number,
  kind: Kind,
  namespace: string,
  name: string,
  prev: unknown,
  next: unknown,
): string {
  let delta: StatusDelta | null = null;
  if (next !== undefined) {
    const before = (prev ?? {}) as Record<string, unknown>;
    delta = [];
    for (const [key, value] of Object.entries(next as Record<string, unknown>)) {
      if (value === undefined) continue; // JSON drops it too
      delta.push(Object.hasOwn(before, key) && sameJson(before[key], value) ? [key] : [key, value]);
    }
  }
  return JSON.stringify([rev, 'S', kind, namespace, name, delta]);
}

/** Equality of two parsed JSON values, without serializing them (a status write compares ~2 KB per key). */
function sameJson(a: unknown, b: unknown): boolean {
  if (a === b) return true;
  if (typeof a !== 'object' || typeof b !== 'object' || a === null || b === null) return false;
  if (Array.isArray(a) || Array.isArray(b)) {
    if (!Array.isArray(a) || !Array.isArray(b) || a.length !== b.length) return false;
    return a.every((v, i) => sameJson(v, b[i]));
  }
  const keys = Object.keys(a);
  if (keys.length !== Object.keys(b).length) return false;
  const x = a as Record<string, unknown>;
  const y = b as Record<string, unknown>;
  return keys.every((k) => Object.hasOwn(y, k) && sameJson(x[k], y[k]));
}

export function encodeDelete(rev: number, kind: Kind, namespace: string, name: string): string {
  return JSON.stringify([rev, 'X', kind, namespace, name]);
}

/** Decodes a record's JSON text (either version); undefined when it is not a record. */
export function decodeRecord(json: string): WalRecord | undefined {
  let value: unknown;
  try {
    value = JSON.parse(json);
  } catch {
    return undefined;
  }
  if (Array.isArray(value)) return fromArray(value);
  const v1 = value as { rev?: unknown; type?: unknown; object?: unknown } | null;
  if (typeof v1?.rev !== 'number' || typeof v1.type !== 'string' || typeof v1.object !== 'object') return undefined;
  return { rev: v1.rev, op: 'put', type: v1.type as WatchEventType, object: v1.object as AnyResource };
}

function fromArray(a: unknown[]): WalRecord | undefined {
  const [rev, code] = a;
  if (typeof rev !== 'number') return undefined;
  const type = PUT_TYPES[code as string];
  if (type !== undefined) {
    const object = a[2];
    if (typeof object !== 'object' || object === null) return undefined;
    return { rev, op: 'put', type, object: object as AnyResource };
  }
  const [, , kind, namespace, name, status] = a;
  if (!isKind(kind) || typeof namespace !== 'string' || typeof name !== 'string') return undefined;
  if (code === 'X') return { rev, op: 'delete', kind, namespace, name };
  if (code === 'S' && (status === null || Array.isArray(status))) {
    return { rev, op: 'status', kind, namespace, name, status: status as StatusDelta | null };
  }
  return undefined;
}

const isKind = (k: unknown): k is Kind => (KINDS as readonly unknown[]).includes(k);

/** Kind, namespace and name of the object a record is about. */
export function recordKey(rec: WalRecord): { kind: Kind; namespace: string; name: string } {
  if (rec.op !== 'put') return rec;
  const { kind, metadata } = rec.object;
  return { kind, namespace: metadata.namespace, name: metadata.name };
}

/**
 * The object a record leaves (for DELETED, the last state a watch's event carries), given the object of the
 * same key before it, which it modifies (pass a copy). Throws when a record that needs that object finds
 * none: the log is inconsistent.
 */
export function applyRecord(
  rec: WalRecord,
  prev: AnyResource | undefined,
): { type: WatchEventType; object: AnyResource } {
  if (rec.op === 'put') return { type: rec.type, object: rec.object };
  if (prev === undefined) {
    const what = `${rec.kind} ${rec.namespace}/${rec.name}`;
    throw new Error(`record at revision ${rec.rev} changes ${what}, which does not exist then`);
  }
  const object = prev;
  object.metadata.resourceVersion = String(rec.rev);
  if (rec.op === 'delete') return { type: 'DELETED', object };
  if (rec.status === null) {
    delete object.status;
  } else {
    const before = (prev.status ?? {}) as Record<string, unknown>;
    const status: Record<string, unknown> = {};
    for (const entry of rec.status) status[entry[0]] = entry.length === 2 ? entry[1] : before[entry[0]];
    (object as { status?: unknown }).status = status;
  }
  return { type: 'MODIFIED', object };
}
