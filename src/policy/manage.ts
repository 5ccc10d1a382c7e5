import { z } from 'zod';
import { OperatorAgentScopeSchema } from '../api/http/index.ts';
import {
  AgentPolicySpecSchema,
  API_VERSION,
  invalidObjectName,
  isObjectName,
  type AgentPolicy,
  type AgentPolicySpec,
  type AgentScope,
} from '../api/v1alpha1/index.ts';
import { AgentWalletError } from '../lib/errors.ts';
import { retryOnConflict } from '../runtime/retry.ts';
import { isStoreError, type ResourceStore } from '../store/types.ts';
import { compileRules } from './rules.ts';

/**
 * Operator actions on AgentPolicies (docs/policies.md, "Writing policies"): only operator channels call these (the
 * admin socket, the CLI on the store or with `--kube`); no API key route writes a policy. A policy is written whole
 * and refused whole: nothing is stored that the evaluator would have to fail closed on.
 */

export type PolicyErrorCode = 'invalid_policy' | 'unknown_api_client' | 'policy_not_found';

export class PolicyError extends AgentWalletError<PolicyErrorCode> {
  override readonly name = 'PolicyError';
}

/** What an operator writes: the policy's name and its whole spec (what `getPolicy` answers, so it round-trips). */
export interface PolicyDocument {
  name: string;
  spec: AgentPolicySpec;
}

export interface PolicySummary {
  name: string;
  api_client: string;
  /** The agent ids it governs; undefined: every agent of the key (the key-level policy). */
  agents: AgentScope | undefined;
  suspended: boolean;
  valid_from: string | undefined;
  valid_until: string | undefined;
  rules: number;
  /** Its budgets (docs/policies.md "Budgets"). */
  budgets: number;
  /** Why the policy as stored cannot be read (written past the checks): it accepts nothing until fixed. */
  unreadable?: string;
  created_at: string | undefined;
  /** Bumped by every change of the spec. */
  generation: number | undefined;
}

/** The document's outer shape; the spec is checked field by field below, so its messages can name the field. */
const DocumentSchema = z.strictObject({ name: z.string(), spec: z.looseObject({}) });

/**
 * Validates `doc` as a policy of `namespace`, then creates it, or replaces the spec of the one with that name
 * (its metadata kept; `suspended` kept too unless the document gives it). Every refusal is a PolicyError naming
 * the field or rule at fault.
 */
export async function applyPolicy(
  store: ResourceStore,
  namespace: string,
  doc: unknown,
): Promise<{ created: boolean; policy: PolicySummary }> {
  const { name, spec } = validatePolicy(doc);
  // The kill switch is lifted by `resume` only: a document that does not say `suspended` keeps the stored state, so
  // applying an edited file to a suspended agent does not let it act again.
  const suspendedGiven = Object.hasOwn((doc as { spec: object }).spec, 'suspended');
  await requireApiClient(store, namespace, spec.apiClient);
  for (let attempt = 1; ; attempt++) {
    // Create-or-update against a store others may write at the same time: a lost race is tried again from a fresh read.
    try {
      const existing = await getStored(store, namespace, name);
      if (existing === undefined) {
        const created = await store.create<AgentPolicy>({ apiVersion: API_VERSION, kind: 'AgentPolicy', metadata: { name, namespace }, spec });
        return { created: true, policy: summarize(created) };
      }
      const suspended = suspendedGiven ? spec.suspended : existing.spec.suspended;
      return { created: false, policy: summarize(await store.update({ ...existing, spec: { ...spec, suspended } })) };
    } catch (e) {
      if (attempt >= 5 || !(isStoreError(e, 'Conflict') || isStoreError(e, 'AlreadyExists'))) throw e;
    }
  }
}

/** The policy as an operator wrote it: `{ name, spec }`, ready to edit and apply again. */
export async function getPolicy(store: ResourceStore, namespace: string, name: string): Promise<PolicyDocument> {
  const p = readable(await getExisting(store, namespace, name));
  return { name: p.metadata.name, spec: p.spec };
}

/** The namespace's policies, or one key's (`apiClient`), by name. */
export async function listPolicies(store: ResourceStore, namespace: string, opts: { apiClient?: string } = {}): Promise<PolicySummary[]> {
  const { items } = await store.list('AgentPolicy', { namespace });
  return items
    .filter((p) => opts.apiClient === undefined || p.spec.apiClient === opts.apiClient)
    .map(summarize)
    .sort((a, b) => a.name.localeCompare(b.name));
}

export async function deletePolicy(store: ResourceStore, namespace: string, name: string): Promise<{ name: string }> {
  if (!isObjectName(name)) throw notFound(name);
  try {
    await store.delete('AgentPolicy', name, { namespace });
  } catch (e) {
    if (isStoreError(e, 'NotFound')) throw notFound(name);
    throw e;
  }
  return { name };
}

/**
 * The kill switch: one spec update (on the version read, so a concurrent edit of the policy is never written
 * over; tried again on Conflict). Suspending an agent stops what it has not had signed yet.
 */
export async function setSuspended(store: ResourceStore, namespace: string, name: string, suspended: boolean): Promise<PolicySummary> {
  const updated = await retryOnConflict(async () => {
    const p = readable(await getExisting(store, namespace, name));
    return p.spec.suspended === suspended ? p : store.update({ ...p, spec: { ...p.spec, suspended } });
  });
  return summarize(updated);
}

/** `doc` as a policy, or the PolicyError of its first fault (all of a rule compilation's, at once). */
export function validatePolicy(doc: unknown): PolicyDocument {
  const outer = DocumentSchema.safeParse(doc);
  if (!outer.success) throw invalid(`a policy is { "name": …, "spec": … }: ${describeIssue(outer.error.issues[0], [])}`);
  const { name } = outer.data;
  const badName = invalidObjectName(name);
  if (badName !== undefined) throw invalid(`name ${JSON.stringify(name)} ${badName}`);
  const parsed = AgentPolicySpecSchema.safeParse(outer.data.spec);
  if (!parsed.success) throw invalid(describeSpecIssue(parsed.error.issues[0], outer.data.spec));
  const spec = parsed.data;
  // zod drops keys it does not know: a misspelt `rule` would silently leave a policy that accepts nothing.
  const unknown = unknownKey(outer.data.spec, spec, ['spec']);
  if (unknown !== undefined) throw invalid(`${unknown} is not a field of a policy`);
  if (spec.agents !== undefined) {
    const scope = OperatorAgentScopeSchema.safeParse(spec.agents);
    if (!scope.success) throw invalid(describeIssue(scope.error.issues[0], ['spec', 'agents']));
  }
  const seen = new Set<string>();
  for (const rule of spec.rules) {
    if (seen.has(rule.name)) throw invalid(`rule ${JSON.stringify(rule.name)} is named twice: rule names are unique within a policy`);
    seen.add(rule.name);
  }
  const budgets = new Set<string>();
  for (const budget of spec.budgets ?? []) {
    if (budgets.has(budget.name)) throw invalid(`budget ${JSON.stringify(budget.name)} is named twice: budget names are unique within a policy`);
    budgets.add(budget.name);
  }
  if (spec.validFrom !== undefined && spec.validUntil !== undefined && !(Date.parse(spec.validFrom) < Date.parse(spec.validUntil))) {
    throw invalid(`spec.validFrom (${spec.validFrom}) must be before spec.validUntil (${spec.validUntil})`);
  }
  const compiled = compileRules(spec.rules);
  if (!compiled.ok) throw invalid(compiled.error.map((e) => `rule ${JSON.stringify(e.rule)}: ${e.message}`).join('; '));
  return { name, spec };
}

async function requireApiClient(store: ResourceStore, namespace: string, id: string): Promise<void> {
  const missing = () => new PolicyError('unknown_api_client', `spec.apiClient: no API key with id ${JSON.stringify(id)} in namespace ${namespace}`);
  if (!isObjectName(id)) throw missing();
  try {
    await store.get('ApiClient', id, namespace);
  } catch (e) {
    if (isStoreError(e, 'NotFound')) throw missing();
    throw e;
  }
}

async function getStored(store: ResourceStore, namespace: string, name: string): Promise<AgentPolicy | undefined> {
  try {
    return await store.get('AgentPolicy', name, namespace);
  } catch (e) {
    if (isStoreError(e, 'NotFound')) return undefined;
    throw e;
  }
}

async function getExisting(store: ResourceStore, namespace: string, name: string): Promise<AgentPolicy> {
  const p = isObjectName(name) ? await getStored(store, namespace, name) : undefined;
  if (p === undefined) throw notFound(name);
  return p;
}

const invalid = (message: string) => new PolicyError('invalid_policy', message);

/**
 * `p`, unless it is stored in a shape the schema refuses (written with kubectl past the checks): what the service
 * reads of it (unreadablePolicy, no rules) is not what was written, so it is neither shown as the policy nor
 * written back. It accepts nothing meanwhile; `apply` a fixed file, or delete it.
 */
function readable(p: AgentPolicy): AgentPolicy {
  if (p.status?.unreadable === undefined) return p;
  throw invalid(`policy ${p.metadata.name} as stored cannot be read (${p.status.unreadable}); it accepts nothing until a fixed file is applied, or it is deleted`);
}
const notFound = (name: string) => new PolicyError('policy_not_found', `no policy named ${JSON.stringify(name)}`);

/** `spec.rules.0.targets.1: Invalid string…`, with the rule's name when the path goes through one. */
function describeIssue(issue: z.core.$ZodIssue | undefined, prefix: (string | number)[]): string {
  if (issue === undefined) return 'invalid';
  const path = [...prefix, ...issue.path.map((p) => (typeof p === 'symbol' ? String(p) : p))];
  return `${path.length > 0 ? `${path.join('.')}: ` : ''}${issue.message}`;
}

/** A spec issue, led by the name of the rule it is in when that rule has one: `rule "usdc-only": spec.rules.0.targets.0: …`. */
function describeSpecIssue(issue: z.core.$ZodIssue | undefined, spec: unknown): string {
  const text = describeIssue(issue, ['spec']);
  const [field, index] = issue?.path ?? [];
  const rules = (spec as { rules?: unknown } | null)?.rules;
  const ruleName = field === 'rules' && typeof index === 'number' && Array.isArray(rules) ? (rules[index] as { name?: unknown } | null)?.name : undefined;
  return typeof ruleName === 'string' ? `rule ${JSON.stringify(ruleName)}: ${text}` : text;
}

/** The path of the first key of `input` that `parsed` (zod's output, unknown keys dropped) lacks, if any. */
function unknownKey(input: unknown, parsed: unknown, path: (string | number)[]): string | undefined {
  if (Array.isArray(input) && Array.isArray(parsed)) {
    for (const [i, v] of input.entries()) {
      const found = unknownKey(v, parsed[i], [...path, i]);
      if (found) return found;
    }
    return undefined;
  }
  if (input === null || typeof input !== 'object' || parsed === null || typeof parsed !== 'object') return undefined;
  for (const [k, v] of Object.entries(input)) {
    if (!(k in parsed)) return [...path, k].join('.');
    const found = unknownKey(v, (parsed as Record<string, unknown>)[k], [...path, k]);
    if (found) return found;
  }
  return undefined;
}

function summarize(p: AgentPolicy): PolicySummary {
  return {
    name: p.metadata.name,
    api_client: p.spec.apiClient,
    agents: p.spec.agents,
    suspended: p.spec.suspended,
    valid_from: p.spec.validFrom,
    valid_until: p.spec.validUntil,
    rules: p.spec.rules.length,
    budgets: p.spec.budgets?.length ?? 0,
    ...(p.status?.unreadable !== undefined && { unreadable: p.status.unreadable }),
    created_at: p.metadata.creationTimestamp,
    generation: p.metadata.generation,
  };
}
