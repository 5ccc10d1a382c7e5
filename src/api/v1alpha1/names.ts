/**
 * The API server's rules for names, namespaces and labels, defined once: the embedded store enforces them (so
 * that something that works on `npm start` cannot fail with 422 once it meets a real cluster), the archive
 * refuses names that cannot exist, and the gateway answers 404 for a request id that cannot name a resource.
 */

/** The namespace of the service's resources unless configured otherwise (as in Kubernetes). */
export const DEFAULT_NAMESPACE = 'default';

/** Longest object name (an RFC 1123 subdomain). */
export const OBJECT_NAME_MAX_LENGTH = 253;

const DNS1123_LABEL = /^[a-z0-9]([-a-z0-9]*[a-z0-9])?$/;
export const DNS1123_SUBDOMAIN = /^[a-z0-9]([-a-z0-9]*[a-z0-9])?(\.[a-z0-9]([-a-z0-9]*[a-z0-9])?)*$/;
const LABEL_NAME = /^([A-Za-z0-9][-A-Za-z0-9_.]*)?[A-Za-z0-9]$/;
const LABEL_VALUE = /^(([A-Za-z0-9][-A-Za-z0-9_.]*)?[A-Za-z0-9])?$/;

/** Returns why `name` is not a valid object name (RFC 1123 subdomain, ≤ 253), or undefined when it is. */
export function invalidObjectName(name: string): string | undefined {
  if (name.length > OBJECT_NAME_MAX_LENGTH) return 'must be no more than 253 characters';
  if (!DNS1123_SUBDOMAIN.test(name)) {
    return "must consist of lower case alphanumeric characters, '-' or '.', and must start and end with an alphanumeric character";
  }
  return undefined;
}

/** Returns why `ns` is not a valid namespace (RFC 1123 label, ≤ 63), or undefined when it is. */
export function invalidNamespace(ns: string): string | undefined {
  if (ns.length > 63) return 'must be no more than 63 characters';
  if (!DNS1123_LABEL.test(ns)) {
    return "must consist of lower case alphanumeric characters or '-', and must start and end with an alphanumeric character";
  }
  return undefined;
}

/** Returns why a label set is invalid (qualified keys with optional DNS prefix, values ≤ 63), or undefined. */
export function invalidLabels(labels: Record<string, string> | undefined): string | undefined {
  for (const [key, value] of Object.entries(labels ?? {})) {
    const slash = key.indexOf('/');
    const prefix = slash >= 0 ? key.slice(0, slash) : undefined;
    const name = slash >= 0 ? key.slice(slash + 1) : key;
    if (prefix !== undefined && (prefix.length > 253 || !DNS1123_SUBDOMAIN.test(prefix))) {
      return `label key ${JSON.stringify(key)}: prefix must be a DNS subdomain`;
    }
    if (name.length > 63 || !LABEL_NAME.test(name)) {
      return `label key ${JSON.stringify(key)}: name must be ≤ 63 alphanumeric characters, '-', '_' or '.', starting and ending with an alphanumeric`;
    }
    if (value.length > 63 || !LABEL_VALUE.test(value)) {
      return `label ${JSON.stringify(key)} value ${JSON.stringify(value)}: must be empty or ≤ 63 alphanumeric characters, '-', '_' or '.', starting and ending with an alphanumeric`;
    }
  }
  return undefined;
}

/** Equality-based selector: every selected label must be present with the same value. */
export function matchesLabels(
  labels: Readonly<Record<string, string>> | undefined,
  selector: Readonly<Record<string, string>> | undefined,
): boolean {
  if (selector === undefined) return true;
  for (const key in selector) {
    if (labels?.[key] !== selector[key]) return false;
  }
  return true;
}

/** Whether `name` could be an object's name at all: callers answer "not found" without a lookup otherwise. */
export const isObjectName = (name: string): boolean => invalidObjectName(name) === undefined;
