/**
 * Test code: what kube-apiserver does to a custom resource on create/update, for the structural subset our
 * generator emits, in the server's order (apiextensions-apiserver v0.30, customresource_handler.go):
 *   1. prune fields the schema does not know (schema/pruning),
 *   2. drop nulls of non-nullable fields that have no default (schema/defaulting/prunenulls.go),
 *   3. apply defaults (schema/defaulting/algorithm.go),
 *   4. validate (kube-openapi validate: type, enum, pattern, bounds, lengths, formats the server supports).
 * apiVersion, kind and metadata are the server's own business (validated apart, never pruned); we keep them.
 * Not modelled: field-validation=Strict (kubectl's default turns step 1 into an error), CEL rules (we emit none).
 */
import { isIPv6 } from 'node:net';
import type { StructuralSchema } from '../structural.ts';

type Json = null | boolean | number | string | Json[] | { [k: string]: Json };
type JsonObject = { [k: string]: Json };

export type Admission = { ok: true; object: JsonObject } | { ok: false; errors: string[] };

const SERVER_OWNED = ['apiVersion', 'kind', 'metadata'];
const isObject = (x: unknown): x is JsonObject => typeof x === 'object' && x !== null && !Array.isArray(x);
const PRESERVE = 'x-kubernetes-preserve-unknown-fields';

export function admit(root: StructuralSchema, input: unknown): Admission {
  if (!isObject(input)) return { ok: false, errors: ['$: must be an object'] };
  const obj = structuredClone(input);
  const owned = Object.fromEntries(SERVER_OWNED.filter((k) => k in obj).map((k) => [k, obj[k]!]));
  for (const k of SERVER_OWNED) delete obj[k];
  prune(obj, root);
  pruneNulls(obj, root);
  applyDefaults(obj, root);
  const errors: string[] = [];
  validate(obj, root, '$', errors);
  return errors.length > 0 ? { ok: false, errors } : { ok: true, object: { ...owned, ...obj } };
}

/** Validation errors of `value` against `schema` alone (no pruning or defaulting). */
export function schemaErrors(schema: StructuralSchema, value: unknown, path = '$'): string[] {
  const errors: string[] = [];
  validate(value as Json, schema, path, errors);
  return errors;
}

/** `value` as the server would prune it: what the CRD schema would keep of it. */
export function pruneUnknown(schema: StructuralSchema, value: unknown): unknown {
  const copy = structuredClone(value) as Json;
  prune(copy, schema);
  return copy;
}

function fieldSchema(s: StructuralSchema | undefined, k: string): StructuralSchema | undefined {
  return s?.properties?.[k] ?? s?.additionalProperties;
}

function prune(x: Json, s: StructuralSchema | undefined): void {
  if (isObject(x)) {
    for (const k of Object.keys(x)) {
      const p = fieldSchema(s, k);
      if (p) prune(x[k]!, p);
      else if (!s?.[PRESERVE]) delete x[k];
    }
  } else if (Array.isArray(x)) {
    for (const v of x) prune(v, s?.items);
  }
}

function pruneNulls(x: Json, s: StructuralSchema | undefined): void {
  if (isObject(x)) {
    for (const k of Object.keys(x)) {
      const p = fieldSchema(s, k);
      if (x[k] === null && p && !p.nullable && p.default === undefined) delete x[k];
      else pruneNulls(x[k]!, p);
    }
  } else if (Array.isArray(x)) {
    for (const v of x) pruneNulls(v, s?.items);
  }
}

function applyDefaults(x: Json, s: StructuralSchema | undefined): void {
  if (!s) return;
  if (isObject(x)) {
    for (const [k, p] of Object.entries(s.properties ?? {})) {
      if (p.default !== undefined && (!(k in x) || (x[k] === null && !p.nullable))) {
        x[k] = structuredClone(p.default) as Json;
      }
    }
    for (const k of Object.keys(x)) applyDefaults(x[k]!, fieldSchema(s, k));
  } else if (Array.isArray(x)) {
    for (const v of x) applyDefaults(v, s.items);
  }
}

function hasType(x: Json, type: StructuralSchema['type']): boolean {
  switch (type) {
    case 'object': return isObject(x);
    case 'array': return Array.isArray(x);
    case 'string': return typeof x === 'string';
    case 'boolean': return typeof x === 'boolean';
    case 'integer': return Number.isInteger(x);
    case 'number': return typeof x === 'number' && Number.isFinite(x);
  }
}

function validate(x: Json, s: StructuralSchema, path: string, errors: string[]): void {
  if (x === null && s.nullable) return;
  if (!hasType(x, s.type)) {
    errors.push(`${path}: must be of type ${s.type}`);
    return;
  }
  if (s.enum && !s.enum.includes(x as string | number | boolean)) errors.push(`${path}: not one of the enum values`);
  if (typeof x === 'string') {
    // Go counts runes, not UTF-16 units; [...x] counts code points, the same thing.
    const length = [...x].length;
    if (s.minLength !== undefined && length < s.minLength) errors.push(`${path}: shorter than ${s.minLength}`);
    if (s.maxLength !== undefined && length > s.maxLength) errors.push(`${path}: longer than ${s.maxLength}`);
    // Go's RE2 and JavaScript agree on the patterns zod emits (anchored classes and repeats, no lookaround).
    if (s.pattern !== undefined && !new RegExp(s.pattern).test(x)) errors.push(`${path}: does not match ${s.pattern}`);
    if (s.format === 'uri' && !isGoRequestUri(x)) errors.push(`${path}: not a uri`);
  }
  if (typeof x === 'number') {
    if (s.minimum !== undefined && (s.exclusiveMinimum ? x <= s.minimum : x < s.minimum)) errors.push(`${path}: below minimum`);
    if (s.maximum !== undefined && (s.exclusiveMaximum ? x >= s.maximum : x > s.maximum)) errors.push(`${path}: above maximum`);
  }
  if (Array.isArray(x)) {
    if (s.minItems !== undefined && x.length < s.minItems) errors.push(`${path}: fewer than ${s.minItems} items`);
    if (s.maxItems !== undefined && x.length > s.maxItems) errors.push(`${path}: more than ${s.maxItems} items`);
    x.forEach((v, i) => s.items && validate(v, s.items, `${path}[${i}]`, errors));
  }
  if (isObject(x)) {
    for (const k of s.required ?? []) if (!(k in x)) errors.push(`${path}.${k}: required`);
    for (const [k, v] of Object.entries(x)) {
      const p = fieldSchema(s, k);
      if (p) validate(v, p, `${path}.${k}`, errors);
    }
  }
}

/**
 * Go's net/url.ParseRequestURI, which the server uses for `format: uri`, in its main rules: no control
 * characters; a scheme, or else a path starting with '/'; with a scheme and no '/', anything (an opaque URI such
 * as mailto:x); an authority's userinfo, host and port charset; well-formed %-escapes. IPv6 zone identifiers and
 * Go-version-dependent colon rules are not modelled; the corpus does not use them.
 */
export function isGoRequestUri(s: string): boolean {
  if (s === '' || /[\x00-\x1f\x7f]/.test(s)) return false;
  if (s === '*') return true;
  if (s.startsWith(':')) return false; // "missing protocol scheme"
  const scheme = /^[A-Za-z][A-Za-z0-9+.-]*:/.exec(s)?.[0] ?? '';
  const rest = s.slice(scheme.length).split('?')[0]!;
  if (!rest.startsWith('/')) return scheme !== '';
  let path = rest;
  if (scheme !== '' && rest.startsWith('//')) {
    const slash = rest.indexOf('/', 2);
    const authority = slash < 0 ? rest.slice(2) : rest.slice(2, slash);
    path = slash < 0 ? '' : rest.slice(slash);
    const at = authority.lastIndexOf('@');
    const userinfo = at < 0 ? '' : authority.slice(0, at);
    if (!/^[A-Za-z0-9\-._:~!$&'()*+,;=%@]*$/.test(userinfo) || !escapesOk(userinfo)) return false;
    if (!goHostOk(authority.slice(at + 1))) return false;
  }
  return escapesOk(path);
}

const escapesOk = (s: string): boolean => !/%(?![0-9A-Fa-f]{2})/.test(s);

function goHostOk(host: string): boolean {
  let name = host;
  let port = '';
  if (host.startsWith('[')) {
    const close = host.lastIndexOf(']');
    if (close < 0 || !isIPv6(host.slice(1, close))) return false;
    return /^(:[0-9]*)?$/.test(host.slice(close + 1));
  }
  const colon = host.lastIndexOf(':');
  if (colon >= 0) [name, port] = [host.slice(0, colon), host.slice(colon)];
  if (!/^(:[0-9]*)?$/.test(port)) return false;
  // Host bytes Go accepts unescaped; '%' may only escape non-ASCII bytes (or be %25).
  if (!/^([A-Za-z0-9\-_.~!$&'()*+,;=:<>"\u0080-\uffff]|%[89A-Fa-f][0-9A-Fa-f]|%25)*$/.test(name)) return false;
  return true;
}
