import { decodeFunctionData, parseAbiItem, toFunctionSelector, type AbiFunction, type Hex } from 'viem';
import type { AgentPolicy, Call, PolicyRule } from '../api/v1alpha1/index.ts';
import { err, ok, type Result } from '../lib/result.ts';
import { approvalOf } from './approvals.ts';
import type { PolicyFacts } from './facts.ts';
import { meetsUintBounds, meetsValueCondition, numericBoundsValid } from './values.ts';
import { decimalToMicro } from './usd.ts';
import { formatMicroUsd, totalOf, type ExecutionValue } from './valuation.ts';

/** A rule made ready to match: whether it holds for one call of a request. */
export interface CompiledRule {
  rule: PolicyRule;
  matches(facts: PolicyFacts, call: Call): boolean;
  /** Whether its conditions on the whole request (chain, protocol action) hold: what can be judged before planning. */
  matchesRequest(facts: PolicyFacts): boolean;
  /** Whether it has conditions on calls (target, selector, function, value, approval). */
  judgesCalls: boolean;
  /** Whether it has conditions on what leaves the wallet (outflow, usd): the simulation must trace outflows. */
  judgesOutflows: boolean;
  /** The figures its outflow and USD conditions saw, for a refusal's message (undefined: it has none). */
  explain(facts: PolicyFacts): string | undefined;
}

/** Why a rule cannot be used: a function signature that does not parse, an argument it does not have. */
export interface RuleError {
  rule: string;
  message: string;
}

/** Compiles every rule of a policy; the errors of those that cannot be, each naming its rule. */
export function compileRules(rules: readonly PolicyRule[]): Result<CompiledRule[], RuleError[]> {
  const compiled: CompiledRule[] = [];
  const errors: RuleError[] = [];
  for (const rule of rules) {
    const c = compileRule(rule);
    if (c.ok) compiled.push(c.value);
    else errors.push({ rule: rule.name, message: c.error });
  }
  return errors.length > 0 ? err(errors) : ok(compiled);
}

/** Compiled rules by policy version (namespace/name@resourceVersion): caches hand out copies, so not by object. */
const compiledByVersion = new Map<string, Result<CompiledRule[], RuleError[]>>();
const COMPILED_KEPT = 1024;

/** compileRules of a stored policy, once per version of it (a policy without a resourceVersion: every time). */
export function rulesOf(policy: AgentPolicy): Result<CompiledRule[], RuleError[]> {
  const { namespace, name, resourceVersion } = policy.metadata;
  if (resourceVersion === undefined) return compileRules(policy.spec.rules);
  const key = `${namespace}/${name}@${resourceVersion}`;
  let c = compiledByVersion.get(key);
  if (!c) {
    c = compileRules(policy.spec.rules);
    // Oldest first out: versions a change replaced are never asked for again.
    if (compiledByVersion.size >= COMPILED_KEPT) compiledByVersion.delete(compiledByVersion.keys().next().value!);
    compiledByVersion.set(key, c);
  }
  return c;
}

function compileRule(rule: PolicyRule): Result<CompiledRule, string> {
  // What a condition that cannot be judged (a value the call or input lacks, arguments that do not decode) means:
  // an accept rule does not accept on it, a reject rule rejects on it. Either way the doubt refuses.
  const unknownMeans = rule.action === 'reject';
  const judged = (v: boolean | undefined) => v ?? unknownMeans;
  const bad = [...(rule.function?.args ?? []), ...(rule.protocol?.input ?? [])].find((c) => !numericBoundsValid(c));
  if (bad) return err(`the bounds of ${JSON.stringify(bad.field)} must be decimal numbers (such as 100 or 0.5)`);

  const checks: ((facts: PolicyFacts, call: Call) => boolean)[] = [];
  const requestChecks: ((facts: PolicyFacts) => boolean)[] = [];
  if (rule.chains) {
    const chains = new Set<string>(rule.chains);
    requestChecks.push((f) => chains.has(f.chain));
  }
  if (rule.targets) {
    const targets = new Set(rule.targets.map((a) => a.toLowerCase()));
    checks.push((_, call) => targets.has(call.target.toLowerCase()));
  }
  if (rule.selectors) {
    const selectors = new Set(rule.selectors.map((s) => s.toLowerCase()));
    checks.push((_, call) => selectors.has(selectorOf(call)));
  }
  if (rule.function) {
    const fn = parseFunction(rule.function.signature);
    if (!fn.ok) return fn;
    const args = rule.function.args ?? [];
    for (const a of args) {
      if (argIndex(fn.value, a.field) === undefined) return err(`${fn.value.name} has no argument ${JSON.stringify(a.field)}`);
    }
    const selector = toFunctionSelector(fn.value);
    checks.push((_, call) => {
      if (selectorOf(call) !== selector) return false;
      // The selector's, but arguments that do not decode (a short or padded call a lenient contract may still run).
      const decoded = decodedArgs(call, fn.value, selector);
      if (decoded === undefined) return unknownMeans;
      return args.every((a) => judged(meetsValueCondition(decoded[argIndex(fn.value, a.field)!], a)));
    });
  }
  if (rule.value) {
    const bounds = rule.value;
    checks.push((_, call) => meetsUintBounds(BigInt(call.value), bounds));
  }
  if (rule.approval) {
    const only = rule.approval.spenders && new Set(rule.approval.spenders.map((a) => a.toLowerCase()));
    const not = new Set((rule.approval.spendersNot ?? []).map((a) => a.toLowerCase()));
    checks.push((_, call) => {
      const granted = approvalOf(call);
      if (granted === 'undecodable') return unknownMeans;
      if (!granted) return false;
      const spender = granted.spender.toLowerCase();
      return (only === undefined || only.has(spender)) && !not.has(spender);
    });
  }
  if (rule.protocol) {
    const { actions, input = [] } = rule.protocol;
    requestChecks.push((f) => {
      if (!f.action || !actions.some((a) => actionMatches(a, f.action!.name))) return false;
      return input.every((c) => judged(meetsValueCondition(fieldAt(f.action!.input, c.field), c)));
    });
  }
  // Outflows and USD judge the whole request. Where they are not known (the gateway's early check) they refuse
  // nothing: a reject does not match on them, an accept may (the controller decides with the simulation's).
  const notKnownMeans = rule.action === 'accept';
  const explains: ((facts: PolicyFacts) => string | undefined)[] = [];
  if (rule.outflow) {
    const o = rule.outflow;
    const tokens = o.tokens && new Set(o.tokens.map((t) => t.toLowerCase()));
    const only = o.recipients && new Set(o.recipients.map((a) => a.toLowerCase()));
    const not = new Set((o.recipientsNot ?? []).map((a) => a.toLowerCase()));
    requestChecks.push((f) => {
      if (!f.execution) return notKnownMeans;
      if (!f.execution.outflows) return unknownMeans;
      // Per asset, the sum of its outflows the rule names: a limit cannot be split over several transfers.
      const sums = new Map<string, bigint>();
      for (const out of f.execution.outflows) {
        const asset = out.kind === 'native' ? 'native' : out.token!.toLowerCase();
        const to = out.to.toLowerCase();
        if ((tokens && !tokens.has(asset)) || (only && !only.has(to)) || not.has(to)) continue;
        sums.set(asset, (sums.get(asset) ?? 0n) + out.amount);
      }
      return [...sums.values()].some((sum) => o.amount === undefined || meetsUintBounds(sum, o.amount));
    });
    explains.push((f) => (f.execution && !f.execution.outflows ? `outflows unknown: ${f.execution.unavailable ?? 'not traced'}` : undefined));
  }
  if (rule.usd) {
    const u = rule.usd;
    const bounds = { lt: micro(u.lt), lte: micro(u.lte), gt: micro(u.gt), gte: micro(u.gte) };
    const total = (f: PolicyFacts): ExecutionValue | undefined => f.execution && totalOf(f.execution, u.approvalSpenders);
    requestChecks.push((f) => {
      const v = total(f);
      if (!v) return notKnownMeans;
      if (v.kind !== 'priced') return unknownMeans;
      if (v.unbounded) return bounds.lt === undefined && bounds.lte === undefined; // over any limit
      return meetsUintBounds(v.microUsd, bounds);
    });
    const limits = (['lt', 'lte', 'gt', 'gte'] as const).filter((k) => u[k] !== undefined).map((k) => `${k} ${u[k]}`).join(', ');
    explains.push((f) => {
      const v = total(f);
      if (!v) return undefined;
      const rule = `the rule: ${limits} USD`;
      if (v.kind === 'unavailable') return `this execution's outflows are unknown (${v.reason}): it cannot be valued; ${rule}`;
      if (v.kind === 'unpriced') return `${v.asset === 'native' ? 'the native coin' : `token ${v.asset}`} is unpriced (${v.reason}): the execution cannot be valued; ${rule}`;
      return `this execution ${v.unbounded ? `grants an unbounded allowance (${formatMicroUsd(v.microUsd)} USD besides)` : `${formatMicroUsd(v.microUsd)} USD`}; ${rule}`;
    });
  }
  const matchesRequest = (facts: PolicyFacts) => requestChecks.every((check) => check(facts));
  return {
    ok: true,
    value: {
      rule,
      matchesRequest,
      judgesCalls: checks.length > 0,
      judgesOutflows: rule.outflow !== undefined || rule.usd !== undefined,
      explain: (facts) => explains.map((e) => e(facts)).filter((x) => x !== undefined).join('; ') || undefined,
      matches: (facts, call) => matchesRequest(facts) && checks.every((check) => check(facts, call)),
    },
  };
}

/** Arguments decoded once per call and function however many rules ask (undefined: they do not decode). */
const decodedByCall = new WeakMap<Call, Map<string, readonly unknown[] | undefined>>();
function decodedArgs(call: Call, fn: AbiFunction, selector: string): readonly unknown[] | undefined {
  let byFunction = decodedByCall.get(call);
  if (!byFunction) decodedByCall.set(call, (byFunction = new Map()));
  const key = `${selector}(${fn.inputs.map((i) => i.type).join(',')})`;
  if (byFunction.has(key)) return byFunction.get(key);
  let decoded: readonly unknown[] | undefined;
  try {
    decoded = (decodeFunctionData({ abi: [fn], data: call.data as Hex }).args ?? []) as readonly unknown[];
  } catch {
    decoded = undefined;
  }
  byFunction.set(key, decoded);
  return decoded;
}

/**
 * The call's selector in lower case; `0x` only for a call without data (a plain transfer of value). Data shorter
 * than a selector is itself: it reaches the contract's fallback, and no rule's selector names it.
 */
export const selectorOf = (call: Call): string => (call.data.length >= 10 ? call.data.slice(0, 10) : call.data).toLowerCase();

/** `pool-a-v3/*` matches every action of the family; anything else, its one action. */
const actionMatches = (pattern: string, name: string) =>
  pattern.endsWith('/*') ? name.startsWith(pattern.slice(0, -1)) : pattern === name;

function parseFunction(signature: string): Result<AbiFunction, string> {
  const text = signature.trim().startsWith('function ') ? signature.trim() : `function ${signature.trim()}`;
  try {
    const item = parseAbiItem(text);
    return item.type === 'function' ? ok(item) : err(`${JSON.stringify(signature)} is not a function signature`);
  } catch (e) {
    return err(`${JSON.stringify(signature)} is not a function signature: ${(e as Error).message.split('\n')[0]}`);
  }
}

/** The argument `field` names: by its name, or by its 0-based position. */
function argIndex(fn: AbiFunction, field: string): number | undefined {
  const byName = fn.inputs.findIndex((i) => i.name === field);
  if (byName >= 0) return byName;
  const n = /^(0|[1-9][0-9]?)$/.test(field) ? Number(field) : -1;
  return n >= 0 && n < fn.inputs.length ? n : undefined;
}

/** The value at a dotted path of a protocol action's input (`slippage_bps`, `tokens.0`). */
function fieldAt(input: Record<string, unknown>, path: string): unknown {
  let node: unknown = input;
  for (const key of path.split('.')) {
    if (node === null || typeof node !== 'object' || !Object.hasOwn(node, key)) return undefined;
    node = (node as Record<string, unknown>)[key];
  }
  return node;
}

/** A USD amount of a rule (`100`, `0.5`) as micro-dollars, for comparing with a valuation; undefined stays so. */
const micro = (usd: string | undefined): string | undefined => (usd === undefined ? undefined : decimalToMicro(usd).toString());
