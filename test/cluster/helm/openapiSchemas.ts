/**
 * Turns a Kubernetes OpenAPI v2 document (api/openapi-spec/swagger.json of the k8s.io/kubernetes module, the
 * same source the public kubernetes-json-schema registry is generated from) into one strict JSON schema per
 * kind, laid out the way kubeconform looks them up (`{{ .ResourceKind }}{{ .KindSuffix }}.json`). kubeconform
 * downloads its schemas from GitHub by default; this machine reaches only package registries, so we make
 * them from what we already have.
 *
 *   node bin/run-ts.js test/cluster/helm/openapiSchemas.ts <swagger.json> <out dir>
 *
 * Each file holds the kind's schema plus the definitions it reaches (local `#/definitions/…` refs), so
 * recursive types (a CRD's JSONSchemaProps) need no inlining. "Strict" as in kubeconform's -strict schemas:
 * an object schema with properties rejects any other property, as `kubectl apply --validate=strict` does.
 */
import { mkdir, readFile, writeFile } from 'node:fs/promises';
import { join } from 'node:path';

type Schema = { [key: string]: unknown };
interface Gvk {
  group: string;
  version: string;
  kind: string;
}

const REF = '#/definitions/';

/** Types the API server accepts in more than one JSON form, though the document says `string`. */
const SPECIAL: Record<string, Schema> = {
  'io.k8s.apimachinery.pkg.util.intstr.IntOrString': { oneOf: [{ type: 'string' }, { type: 'integer' }] },
  'io.k8s.apimachinery.pkg.api.resource.Quantity': { oneOf: [{ type: 'string' }, { type: 'number' }] },
};

/** kubeconform's file name for a kind: deployment-apps-v1, service-v1, role-rbac-v1 (group's first label). */
export function schemaFileName({ group, version, kind }: Gvk): string {
  const suffix = group === '' ? `-${version}` : `-${group.split('.')[0]}-${version}`;
  return `${kind.toLowerCase()}${suffix.toLowerCase()}.json`;
}

function strict(node: unknown): unknown {
  if (Array.isArray(node)) return node.map(strict);
  if (node === null || typeof node !== 'object') return node;
  const s = node as Schema;
  if (s.format === 'int-or-string') return { ...SPECIAL['io.k8s.apimachinery.pkg.util.intstr.IntOrString'] };
  const out: Schema = {};
  for (const [k, v] of Object.entries(s)) out[k] = k === 'enum' || k === 'required' ? v : strict(v);
  if (out.properties !== undefined && out.additionalProperties === undefined && !s['x-kubernetes-preserve-unknown-fields']) {
    out.additionalProperties = false;
  }
  return out;
}

function refsOf(node: unknown, into: Set<string>): void {
  if (Array.isArray(node)) for (const x of node) refsOf(x, into);
  else if (node !== null && typeof node === 'object') {
    for (const [k, v] of Object.entries(node as Schema)) {
      if (k === '$ref' && typeof v === 'string' && v.startsWith(REF)) into.add(v.slice(REF.length));
      else refsOf(v, into);
    }
  }
}

/** The definitions reachable from `root` (itself included). */
function closure(definitions: Record<string, Schema>, root: string): string[] {
  const seen = new Set<string>();
  const todo = [root];
  while (todo.length > 0) {
    const name = todo.pop()!;
    if (seen.has(name)) continue;
    const def = definitions[name];
    if (def === undefined) throw new Error(`the document refers to a missing definition ${name}`);
    seen.add(name);
    const refs = new Set<string>();
    refsOf(def, refs);
    todo.push(...refs);
  }
  return [...seen];
}

function definitionSchema(definitions: Record<string, Schema>, name: string): Schema {
  return SPECIAL[name] ?? (strict(definitions[name]) as Schema);
}

/** One schema per (group, version, kind) the document defines; the file name → schema. */
export function kindSchemas(document: { definitions?: Record<string, Schema> }): Map<string, Schema> {
  const definitions = document.definitions ?? {};
  const out = new Map<string, Schema>();
  for (const [name, def] of Object.entries(definitions)) {
    const gvks = def['x-kubernetes-group-version-kind'] as Gvk[] | undefined;
    // Kinds shared by every group (DeleteOptions, WatchEvent) are never manifests.
    if (gvks?.length !== 1) continue;
    const gvk = gvks[0]!;
    const own = definitionSchema(definitions, name);
    const props = { ...(own.properties as Record<string, Schema> | undefined) };
    const apiVersion = gvk.group === '' ? gvk.version : `${gvk.group}/${gvk.version}`;
    props.apiVersion = { ...props.apiVersion, type: 'string', enum: [apiVersion] };
    props.kind = { ...props.kind, type: 'string', enum: [gvk.kind] };
    // Its own definition stays too: a kind may refer to itself.
    const deps = closure(definitions, name);
    out.set(schemaFileName(gvk), {
      ...own,
      properties: props,
      required: [...new Set([...((own.required as string[] | undefined) ?? []), 'apiVersion', 'kind'])],
      definitions: Object.fromEntries(deps.sort().map((d) => [d, definitionSchema(definitions, d)])),
    });
  }
  return out;
}

async function main(): Promise<void> {
  const [swaggerPath, outDir] = process.argv.slice(2);
  if (!swaggerPath || !outDir) throw new Error('usage: openapiSchemas.ts <swagger.json> <out dir>');
  const schemas = kindSchemas(JSON.parse(await readFile(swaggerPath, 'utf8')));
  if (schemas.size === 0) throw new Error(`${swaggerPath} defines no kinds`);
  await mkdir(outDir, { recursive: true });
  for (const [file, schema] of schemas) await writeFile(join(outDir, file), JSON.stringify(schema));
  process.stdout.write(`${schemas.size} schemas in ${outDir}\n`);
}

if (import.meta.url === `file://${process.argv[1]}`) await main();
