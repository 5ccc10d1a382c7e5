/**
 * zod → Kubernetes structural schema. zod's own JSON Schema export (OpenAPI 3.0 dialect) does the heavy
 * lifting; this walk only narrows it to what the API server accepts in a CRD and refuses everything else, so a
 * zod construct with no structural equivalent (a union, a recursive type) fails the generator instead of
 * shipping a CRD that validates something other than the code does.
 */
import { z } from 'zod';

export type StructuralType = 'object' | 'array' | 'string' | 'integer' | 'number' | 'boolean';

/** The subset of OpenAPI v3 the generated CRDs use (wire names, as in the YAML). */
export interface StructuralSchema {
  description?: string;
  type: StructuralType;
  format?: string;
  enum?: (string | number | boolean)[];
  pattern?: string;
  minLength?: number;
  maxLength?: number;
  minimum?: number;
  exclusiveMinimum?: boolean;
  maximum?: number;
  exclusiveMaximum?: boolean;
  minItems?: number;
  maxItems?: number;
  nullable?: boolean;
  default?: unknown;
  items?: StructuralSchema;
  properties?: Record<string, StructuralSchema>;
  additionalProperties?: StructuralSchema;
  required?: string[];
  'x-kubernetes-preserve-unknown-fields'?: true;
}

type JsonNode = Record<string, unknown>;

const TYPES: ReadonlySet<string> = new Set<StructuralType>(['object', 'array', 'string', 'integer', 'number', 'boolean']);

/**
 * Value validations copied as they are: the API server enforces each with zod's meaning. One nuance: string
 * lengths are runes to the server and UTF-16 units to zod, so outside the BMP zod's maxLength is the stricter
 * (safe) and a minLength above 1 would be the laxer (none of our schemas has one).
 */
const COPIED = [
  'enum', 'pattern', 'minLength', 'maxLength', 'minimum', 'exclusiveMinimum', 'maximum',
  'exclusiveMaximum', 'minItems', 'maxItems', 'nullable', 'default',
] as const;
const WALKED = new Set(['description', 'type', 'format', 'items', 'properties', 'additionalProperties', 'required']);

/** Regex syntax JavaScript has and Go's RE2 (the server's pattern engine) refuses: lookaround, backreferences. */
const NOT_RE2 = /\(\?<?[=!]|\\[1-9]/;

export class StructuralSchemaError extends Error {
  override readonly name = 'StructuralSchemaError';
}

/**
 * The JSON Schema of what zod ACCEPTS (io: 'input'): a field with `.default()` is optional there and carries
 * `default`, which the API server applies on write and read — the same value zod fills in when it parses.
 * The 'output' view would mark those fields required and reject objects zod itself accepts.
 */
export function zodToJsonSchema(schema: z.ZodType): JsonNode {
  return z.toJSONSchema(schema, { target: 'openapi-3.0', io: 'input', unrepresentable: 'throw' }) as JsonNode;
}

/** Converts one JSON Schema node (and everything under it); `path` names the node in errors. */
export function toStructural(node: JsonNode, path = '$'): StructuralSchema {
  for (const key of Object.keys(node)) {
    if (!WALKED.has(key) && !(COPIED as readonly string[]).includes(key)) {
      // anyOf/oneOf/allOf/not (unions, intersections), $ref (recursion), const, patternProperties, …
      throw new StructuralSchemaError(`${path}: '${key}' has no structural equivalent; change the zod schema`);
    }
  }
  const type = node.type;
  if (typeof type !== 'string' || !TYPES.has(type)) {
    throw new StructuralSchemaError(`${path}: every node needs one type, got ${JSON.stringify(type)}`);
  }
  const out: StructuralSchema = {
    ...(typeof node.description === 'string' && { description: node.description }),
    type: type as StructuralType,
  };
  const format = structuralFormat(out.type);
  if (format !== undefined) out.format = format;
  for (const key of COPIED) if (node[key] !== undefined) (out as unknown as JsonNode)[key] = node[key];
  if (typeof out.pattern === 'string' && NOT_RE2.test(out.pattern)) {
    throw new StructuralSchemaError(`${path}: pattern ${out.pattern} uses lookaround or backreferences, which RE2 lacks`);
  }

  if (out.type === 'array') {
    if (typeof node.items !== 'object' || node.items === null || Array.isArray(node.items)) {
      throw new StructuralSchemaError(`${path}: an array needs one items schema (tuples are not structural)`);
    }
    out.items = toStructural(node.items as JsonNode, `${path}[*]`);
  }
  if (out.type === 'object') Object.assign(out, objectParts(node, path));
  return out;
}

function structuralFormat(type: StructuralType): string | undefined {
  // Formats on numbers are not validated by the server; they tell clients (kubectl explain, generated Go
  // types) the width. JSON integers are int64 to Kubernetes; zod's bounds keep them within 2^53, which is
  // what a JavaScript number holds exactly. uint256 amounts never get here: the zod schemas keep them as
  // decimal strings.
  if (type === 'integer') return 'int64';
  if (type === 'number') return 'double';
  // String formats are dropped. zod checks them with WHATWG/regex rules, the server with Go parsers, and they
  // disagree both ways: z.string().url() accepts "https://a.example/%zz", which Go's url.ParseRequestURI
  // (format: uri) refuses, so the server would refuse objects the service itself wrote. Patterns stay: both
  // sides run the same regular expression.
  return undefined;
}

function objectParts(node: JsonNode, path: string): Partial<StructuralSchema> {
  const out: Partial<StructuralSchema> = {};
  const props = (node.properties ?? {}) as Record<string, JsonNode>;
  const names = Object.keys(props);
  if (names.length > 0) {
    out.properties = Object.fromEntries(names.map((k) => [k, toStructural(props[k]!, `${path}.${k}`)]));
  }
  const required = node.required as string[] | undefined;
  if (required && required.length > 0) out.required = [...required];

  const extra = node.additionalProperties;
  if (extra === undefined || extra === false) {
    // Plain z.object strips unknown keys and the API server prunes them: same result. A z.strictObject
    // (additionalProperties: false) would reject instead; no CRD schema can say that, the server only prunes.
    return out;
  }
  if (extra === true || (typeof extra === 'object' && extra !== null && Object.keys(extra).length === 0)) {
    // z.looseObject / .passthrough(): zod keeps unknown keys, so the server must not prune them either.
    out['x-kubernetes-preserve-unknown-fields'] = true;
    return out;
  }
  if (names.length > 0) {
    throw new StructuralSchemaError(`${path}: properties and a typed additionalProperties cannot be combined`);
  }
  // z.record(string, V): a map with typed values.
  out.additionalProperties = toStructural(extra as JsonNode, `${path}.*`);
  return out;
}

/** Fields of every resource the API server owns: it validates them itself, whatever the schema says. */
const API_SERVER_OWNED: Record<string, StructuralSchema> = {
  apiVersion: {
    description: 'The versioned schema of this representation of the object; the server converts to its own.',
    type: 'string',
  },
  kind: { description: 'The REST resource this object represents, in CamelCase.', type: 'string' },
  // A CRD may only restrict metadata.name and generateName; the rest of ObjectMeta (ownerReferences,
  // managedFields, …) must survive even though our zod ObjectMeta lists a subset of it.
  metadata: { type: 'object' },
};

/**
 * The openAPIV3Schema of a resource from its zod schema `{ apiVersion, kind, metadata, spec, status? }`:
 * spec and status converted, the server-owned fields replaced, and only spec required at the root (zod also
 * requires apiVersion, kind and metadata, which every object the server stores has).
 */
export function resourceSchema(resource: z.ZodObject, description: string): StructuralSchema {
  const json = zodToJsonSchema(resource);
  const props = json.properties as Record<string, JsonNode>;
  for (const k of Object.keys(API_SERVER_OWNED)) {
    if (!(k in props)) throw new StructuralSchemaError(`$: a resource schema needs '${k}'`);
  }
  const properties: Record<string, StructuralSchema> = {};
  for (const [k, v] of Object.entries(props)) properties[k] = API_SERVER_OWNED[k] ?? toStructural(v, `$.${k}`);
  const required = ((json.required ?? []) as string[]).filter((k) => !(k in API_SERVER_OWNED));
  return { description, type: 'object', properties, ...(required.length > 0 && { required }) };
}
