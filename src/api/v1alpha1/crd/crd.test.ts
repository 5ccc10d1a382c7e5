/**
 * The committed CRD files are what the generator writes now, and the CRDs keep the rules the API server checks
 * when one is applied (structural schema, valid defaults, printer columns that point at real fields).
 */
import { readdirSync, readFileSync } from 'node:fs';
import { dirname, join, resolve } from 'node:path';
import { fileURLToPath } from 'node:url';
import { describe, expect, it } from 'vitest';
import { z } from 'zod';
import { KINDS } from '../meta.ts';
import { customResourceDefinitions, type PrinterColumn } from './definitions.ts';
import { CRD_DIRS, CRD_FILE_SUFFIX, crdFiles } from './render.ts';
import { resourceSchema, StructuralSchemaError, toStructural, zodToJsonSchema, type StructuralSchema } from './structural.ts';
import { pruneUnknown, schemaErrors } from './testing/apiServerModel.ts';

const root = resolve(dirname(fileURLToPath(import.meta.url)), '../../../..');
const crds = customResourceDefinitions();
const schemaOf = (crd: (typeof crds)[number]) => crd.spec.versions[0]!.schema.openAPIV3Schema;

describe('generated files', () => {
  it.each(crdFiles().map((f) => [f.path, f.text] as const))('%s is fresh (run npm run crds:gen)', (path, text) => {
    expect(readFileSync(join(root, path), 'utf8')).toBe(text);
  });

  it('no stale CRD file is left over', () => {
    const wanted = crdFiles().map((f) => f.path).sort();
    const present = CRD_DIRS.flatMap((dir) =>
      readdirSync(join(root, dir)).filter((n) => n.endsWith(CRD_FILE_SUFFIX)).map((n) => `${dir}/${n}`),
    ).sort();
    expect(present).toEqual(wanted);
  });
});

/** Keywords a structural schema may use here; the server refuses $ref, definitions, and restricts the rest. */
const ALLOWED = new Set([
  'description', 'type', 'format', 'enum', 'pattern', 'minLength', 'maxLength', 'minimum', 'exclusiveMinimum',
  'maximum', 'exclusiveMaximum', 'minItems', 'maxItems', 'nullable', 'default', 'items', 'properties',
  'additionalProperties', 'required', 'x-kubernetes-preserve-unknown-fields',
]);
const TYPES = ['object', 'array', 'string', 'integer', 'number', 'boolean'];

function structuralViolations(s: StructuralSchema, path: string): string[] {
  const out: string[] = [];
  for (const k of Object.keys(s)) if (!ALLOWED.has(k)) out.push(`${path}: forbidden keyword ${k}`);
  if (!TYPES.includes(s.type)) out.push(`${path}: no type`);
  if (s.properties && s.additionalProperties) out.push(`${path}: properties and additionalProperties together`);
  if ((s.properties || s.additionalProperties || s.required) && s.type !== 'object') out.push(`${path}: fields on a ${s.type}`);
  if (s.items && s.type !== 'array') out.push(`${path}: items on a ${s.type}`);
  if (s.type === 'array' && !s.items) out.push(`${path}: array without items`);
  for (const r of s.required ?? []) if (!s.properties?.[r]) out.push(`${path}: required ${r} is not a property`);
  if (s.exclusiveMinimum !== undefined && s.minimum === undefined) out.push(`${path}: exclusiveMinimum without minimum`);
  if (s.default !== undefined) {
    // The server refuses a CRD whose default does not validate, or holds fields pruning would remove.
    out.push(...schemaErrors(s, s.default, `${path}(default)`));
    if (JSON.stringify(pruneUnknown(s, s.default)) !== JSON.stringify(s.default)) out.push(`${path}: default is not pruned`);
  }
  if (s.pattern !== undefined) {
    try {
      new RegExp(s.pattern);
    } catch {
      out.push(`${path}: bad pattern`);
    }
  }
  if (s.items) out.push(...structuralViolations(s.items, `${path}[*]`));
  if (s.additionalProperties) out.push(...structuralViolations(s.additionalProperties, `${path}.*`));
  for (const [k, v] of Object.entries(s.properties ?? {})) out.push(...structuralViolations(v, `${path}.${k}`));
  return out;
}

describe('structural schemas', () => {
  it.each(crds.map((c) => [c.metadata.name, c] as const))('%s keeps the structural rules', (_, crd) => {
    const schema = schemaOf(crd);
    expect(structuralViolations(schema, '$')).toEqual([]);
    // At the root, metadata may only be typed (the server validates ObjectMeta itself).
    expect(schema.properties?.metadata).toEqual({ type: 'object' });
    expect(schema.required).toEqual(['spec']);
  });

  it('preserves unknown fields only where zod keeps them (a protocol action input, PaymentReceipt status)', () => {
    const preserved: string[] = [];
    const walk = (s: StructuralSchema, path: string) => {
      if (s['x-kubernetes-preserve-unknown-fields']) preserved.push(path);
      if (s.items) walk(s.items, `${path}[*]`);
      for (const [k, v] of Object.entries(s.properties ?? {})) walk(v, `${path}.${k}`);
    };
    for (const crd of crds) walk(schemaOf(crd), crd.spec.names.kind);
    expect(preserved).toEqual(['ExecutionRequest.spec.action.input', 'PaymentReceipt.status']);
  });

  it('refuses zod constructs with no structural equivalent', () => {
    const cases: z.ZodType[] = [
      z.object({ a: z.union([z.string(), z.number()]) }),
      z.object({ a: z.string().regex(/^(?!x)/) }),
      z.object({ a: z.tuple([z.string(), z.number()]) }),
      z.object({ a: z.object({ b: z.string() }).catchall(z.number()) }),
    ];
    for (const schema of cases) expect(() => toStructural(zodToJsonSchema(schema))).toThrow(StructuralSchemaError);
    expect(() => resourceSchema(z.object({ spec: z.object({}) }), 'x')).toThrow(StructuralSchemaError);
  });

  it('turns nullable, records and strict objects into their structural forms', () => {
    const s = toStructural(
      zodToJsonSchema(z.object({ n: z.string().nullable(), m: z.record(z.string(), z.number()), s: z.strictObject({ x: z.boolean() }) })),
    );
    expect(s.properties).toEqual({
      n: { type: 'string', nullable: true },
      m: { type: 'object', additionalProperties: { type: 'number', format: 'double' } },
      s: { type: 'object', properties: { x: { type: 'boolean' } }, required: ['x'] },
    });
  });
});

/** ObjectMeta is the server's, not in our schema: the fields it always has, which columns may show. */
const METADATA: Record<string, StructuralSchema> = {
  name: { type: 'string' },
  namespace: { type: 'string' },
  creationTimestamp: { type: 'string' },
};

/** The schema node a printer column's JSONPath reads, following a `[?(@.f=="v")]` filter into the items. */
function columnTarget(schema: StructuralSchema, jsonPath: string): StructuralSchema | undefined {
  const meta = /^\.metadata\.(\w+)$/.exec(jsonPath);
  if (meta) return METADATA[meta[1]!];
  let node: StructuralSchema | undefined = schema;
  for (const step of jsonPath.match(/\.\w+|\[\?\(@\.\w+==".*?"\)\]|\[-?\d*:?-?\d*\]/g) ?? []) {
    if (!node) return undefined;
    if (/^\[-?\d*:?-?\d*\]$/.test(step)) {
      node = node.type === 'array' ? node.items : undefined; // an index or a slice: its items
    } else if (step.startsWith('[')) {
      const field = /@\.(\w+)/.exec(step)![1]!;
      node = node.type === 'array' && node.items?.properties?.[field] ? node.items : undefined;
    } else {
      node = node.properties?.[step.slice(1)];
    }
  }
  return node;
}

const COLUMN_TYPE: Record<PrinterColumn['type'], StructuralSchema['type']> = {
  string: 'string', date: 'string', integer: 'integer', number: 'number', boolean: 'boolean',
};

describe('names and printer columns', () => {
  it.each(crds.map((c) => [c.metadata.name, c] as const))('%s: every column reads a field of its type', (_, crd) => {
    const schema = schemaOf(crd);
    for (const col of crd.spec.versions[0]!.additionalPrinterColumns) {
      expect(columnTarget(schema, col.jsonPath)?.type, `${col.name} ${col.jsonPath}`).toBe(COLUMN_TYPE[col.type]);
    }
  });

  it('ExecutionRequest shows what the issue asks for', () => {
    const crd = crds.find((c) => c.spec.names.kind === 'ExecutionRequest')!;
    const cols = crd.spec.versions[0]!.additionalPrinterColumns;
    const shown = cols.filter((c) => !c.priority).map((c) => `${c.name} ${c.jsonPath}`);
    expect(shown).toEqual([
      'Phase .status.phase',
      'Chain .spec.chain',
      'Agent .spec.agentId',
      'Action .spec.action.name',
      'Order .status.order.state',
      'Tx .status.txHash',
      'Age .metadata.creationTimestamp',
    ]);
    expect(cols.find((c) => c.name === 'Reason')?.priority).toBe(1);
    expect(crd.spec.names.shortNames).toEqual(['exr']);
  });

  it('short names and categories collide with nothing kube-apiserver 1.30 serves', () => {
    // `ShortNames()` of every built-in REST storage in k8s.io/kubernetes v1.30 and apiextensions.
    const builtIn = new Set(
      'cj cm crd crds cs csr deploy ds ep ev hpa ing ip limits netpol no ns pc pdb po pv pvc quota rc rs sa sc sts svc vac'.split(' '),
    );
    const names = crds.flatMap((c) => [...c.spec.names.shortNames, c.spec.names.plural, c.spec.names.singular]);
    expect(names.filter((n) => builtIn.has(n))).toEqual([]);
    expect(new Set(names).size).toBe(names.length);
    for (const c of crds) {
      expect(c.spec.names.categories).toEqual(['agentwallet']);
      expect(c.spec.versions[0]!.subresources).toEqual({ status: {} });
      expect(c.spec.scope).toBe('Namespaced');
    }
    expect(crds.map((c) => c.spec.names.kind)).toEqual([...KINDS]);
  });
});
