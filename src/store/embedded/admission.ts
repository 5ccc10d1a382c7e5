import { isDeepStrictEqual } from 'node:util';
import { SCHEME, type AnyResource, type Kind } from '../../api/v1alpha1/index.ts';
import { StoreError } from '../types.ts';
import { DEFAULT_NAMESPACE, invalidLabels, invalidNamespace, invalidObjectName } from '../../api/v1alpha1/names.ts';

/**
 * What the API server does to an object between the request and the store: validation, server-owned
 * metadata (uid, creationTimestamp, generation, resourceVersion, deletionTimestamp), and the rules of which
 * parts of an object each verb may change. Pure functions of (stored object, request) → next object.
 */
export { assertKind, kindOf } from '../types.ts';

/** Namespace and name of a request body, with the namespace defaulted. */
export function identityOf(obj: AnyResource): { namespace: string; name: string } {
  const meta = (obj as { metadata?: { name?: unknown; namespace?: unknown } }).metadata;
  const name = meta?.name;
  if (typeof name !== 'string' || name === '') throw new StoreError('Invalid', 'metadata.name is required');
  const namespace = meta?.namespace === undefined || meta.namespace === '' ? DEFAULT_NAMESPACE : meta.namespace;
  if (typeof namespace !== 'string') throw new StoreError('Invalid', 'metadata.namespace must be a string');
  return { namespace, name };
}

/** Validates with the kind's schema (applying its defaults) and the API server's name and label rules. */
export function validate(kind: Kind, candidate: unknown): AnyResource {
  const result = SCHEME[kind].schema.safeParse(candidate);
  const m = (candidate as { metadata?: { name?: string; namespace?: string } }).metadata;
  const what = `${kind} ${m?.namespace ?? DEFAULT_NAMESPACE}/${m?.name ?? '?'}`;
  if (!result.success) {
    const issues = result.error.issues.map((i) => `${i.path.join('.') || '(root)'}: ${i.message}`);
    throw new StoreError('Invalid', `${what} is invalid: ${issues.join('; ')}`, { details: { issues } });
  }
  const obj = result.data;
  const problem =
    prefixed('metadata.name', invalidObjectName(obj.metadata.name)) ??
    prefixed('metadata.namespace', invalidNamespace(obj.metadata.namespace)) ??
    prefixed('metadata.labels', invalidLabels(obj.metadata.labels));
  if (problem !== undefined) throw new StoreError('Invalid', `${what} is invalid: ${problem}`);
  return obj;
}

const prefixed = (field: string, problem: string | undefined) => (problem ? `${field}: ${problem}` : undefined);

/** RFC 3339 at second precision, as the API server writes timestamps. */
export const timestamp = (now: Date): string => now.toISOString().replace(/\.\d{3}Z$/, 'Z');

export function prepareCreate(kind: Kind, obj: AnyResource, uid: string, now: Date): AnyResource {
  if (obj.metadata?.resourceVersion) {
    throw new StoreError('Invalid', 'metadata.resourceVersion must not be set on objects to be created');
  }
  const { deletionTimestamp: _ignored, ...metadata } = obj.metadata;
  return validate(kind, {
    ...obj,
    metadata: { ...metadata, uid, creationTimestamp: timestamp(now), generation: 1 },
  });
}

export type Change = { type: 'MODIFIED' | 'DELETED'; object: AnyResource } | { type: 'UNCHANGED' };

/**
 * update: labels, annotations, finalizers and spec come from the request; server-owned metadata and status
 * from the stored object. generation goes up when spec changes. Removing the last finalizer of an object
 * being deleted completes the deletion.
 */
export function prepareUpdate(kind: Kind, current: AnyResource, obj: AnyResource): Change {
  const cur = current.metadata;
  const beingDeleted = cur.deletionTimestamp !== undefined;
  const next = validate(kind, {
    ...obj,
    metadata: {
      ...obj.metadata,
      name: cur.name,
      namespace: cur.namespace,
      uid: cur.uid,
      creationTimestamp: cur.creationTimestamp,
      generation: cur.generation,
      resourceVersion: cur.resourceVersion,
      deletionTimestamp: cur.deletionTimestamp,
    },
    status: current.status,
  });
  if (beingDeleted) {
    const added = (next.metadata.finalizers ?? []).filter((f) => !(cur.finalizers ?? []).includes(f));
    if (added.length > 0) {
      throw new StoreError('Invalid', `no new finalizers can be added while the object is being deleted: ${added.join(', ')}`);
    }
  }
  if (!sameJson(next.spec, current.spec)) next.metadata.generation = (cur.generation ?? 0) + 1;
  if (sameJson(next, current)) return { type: 'UNCHANGED' };
  if (beingDeleted && (next.metadata.finalizers ?? []).length === 0) return { type: 'DELETED', object: next };
  return { type: 'MODIFIED', object: next };
}

/** updateStatus: only status comes from the request; generation never moves. */
export function prepareStatusUpdate(kind: Kind, current: AnyResource, obj: AnyResource): Change {
  const candidate: Record<string, unknown> = { ...current, status: obj.status };
  if (obj.status === undefined) delete candidate.status;
  const next = validate(kind, candidate);
  return sameJson(next, current) ? { type: 'UNCHANGED' } : { type: 'MODIFIED', object: next };
}

/**
 * delete: an object with finalizers is only marked (deletionTimestamp set, generation bumped, as the API
 * server does) and goes away when its finalizers are removed; one without is deleted now.
 */
export function prepareDelete(current: AnyResource, now: Date): Change {
  const meta = current.metadata;
  if ((meta.finalizers ?? []).length === 0) return { type: 'DELETED', object: current };
  if (meta.deletionTimestamp !== undefined) return { type: 'UNCHANGED' };
  const next = structuredClone(current);
  next.metadata.deletionTimestamp = timestamp(now);
  next.metadata.generation = (meta.generation ?? 0) + 1;
  return { type: 'MODIFIED', object: next };
}

/** Equality of JSON values regardless of key order (and of keys whose value is undefined). */
export function sameJson(a: unknown, b: unknown): boolean {
  return isDeepStrictEqual(normalize(a), normalize(b));
}
const normalize = (v: unknown): unknown => (v === undefined ? undefined : JSON.parse(JSON.stringify(v)));
