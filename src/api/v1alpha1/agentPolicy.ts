import { z } from 'zod';
import { ChainNameSchema } from '../../config/chains.ts';
import { AgentScopeSchema } from './apiClient.ts';
import { API_VERSION, ObjectMetaSchema } from './meta.ts';

/**
 * What an API key's agents may do (docs/policies.md). A policy applies to every agent of its key (no `agents`: the
 * key-level policy) or to the agent ids `agents` names (one id, or a prefix). Within a policy's scope nothing is
 * allowed unless one of its rules accepts it, and any matching reject wins; a request must satisfy every policy
 * that applies to it, so the key-level policy bounds every agent policy. Written only by an operator (the admin
 * socket and the CLI on it, or `--kube` with RBAC on AgentPolicies); an API key reads its own and dry-runs it.
 */

const Address = z.string().regex(/^0x[0-9a-fA-F]{40}$/);
/** An unsigned integer as a decimal string (wei and token units do not fit JSON numbers). */
const Uint = z.string().regex(/^(0|[1-9][0-9]{0,77})$/);

/** A decimal number as text, as conditions compare them exactly (src/policy/values.ts reads the same grammar). */
const Decimal = z.string().regex(/^-?(0|[1-9][0-9]{0,79})(\.[0-9]{1,36})?$/);
/** USD to the micro-dollar, as text (`100`, `0.5`). */
const UsdAmount = z.string().regex(/^(0|[1-9][0-9]{0,17})(\.[0-9]{1,6})?$/);

/** Bounds on an unsigned integer, each optional; all that are given must hold. */
export const UintBoundsSchema = z.object({
  eq: Uint.optional(),
  lt: Uint.optional(),
  lte: Uint.optional(),
  gt: Uint.optional(),
  gte: Uint.optional(),
});
export type UintBounds = z.infer<typeof UintBoundsSchema>;

/**
 * A condition on one value: a decoded call argument (by name or position) or a field of a protocol action's input
 * (by dotted path). Numbers compare as integers or decimals, addresses case-insensitively, the rest as text.
 */
export const ValueConditionSchema = z.object({
  /** The argument's name or its 0-based position (`"1"`), or the input field's path (`slippage_bps`, `tokens.0`). */
  field: z.string().min(1).max(128),
  eq: z.string().max(256).optional(),
  ne: z.string().max(256).optional(),
  in: z.array(z.string().max(256)).max(64).optional(),
  notIn: z.array(z.string().max(256)).max(64).optional(),
  /** Numeric bounds (decimal strings such as `100`, `-1` or `0.5`: no exponent, no leading zeros). */
  lt: Decimal.optional(),
  lte: Decimal.optional(),
  gt: Decimal.optional(),
  gte: Decimal.optional(),
});
export type ValueCondition = z.infer<typeof ValueConditionSchema>;

/**
 * One rule: `accept` or `reject` the calls every given condition matches (conditions are ANDed; a rule with none
 * matches every call). Conditions on the whole request (chain, protocol action, outflow, usd) hold for each of its calls.
 */
export const PolicyRuleSchema = z.object({
  /** Named in every refusal and dry-run answer. */
  name: z.string().regex(/^[A-Za-z0-9][A-Za-z0-9_.:-]{0,63}$/),
  action: z.enum(['accept', 'reject']),
  /** The request's chain is one of these. */
  chains: z.array(ChainNameSchema).min(1).optional(),
  /** The call's target contract is one of these. */
  targets: z.array(Address).min(1).max(256).optional(),
  /** The call's function selector (first 4 bytes of its data) is one of these; `0x` matches a call without data. */
  selectors: z.array(z.string().regex(/^0x([0-9a-fA-F]{8})?$/)).min(1).max(256).optional(),
  /**
   * The call is this function (a human-readable signature, `transfer(address to, uint256 amount)`) and its
   * decoded arguments meet `args`.
   */
  function: z
    .object({ signature: z.string().min(3).max(512), args: z.array(ValueConditionSchema).max(16).optional() })
    .optional(),
  /** The call's native value, in wei. */
  value: UintBoundsSchema.optional(),
  /**
   * The call grants an allowance (ERC-20 `approve` or `increaseAllowance` of a non-zero amount, ERC-721/1155
   * `setApprovalForAll(_, true)`, Permit2 `approve`), to a spender in `spenders` / not in `spendersNot` (each
   * optional). A call that grants nothing never matches.
   */
  approval: z
    .object({ spenders: z.array(Address).max(256).optional(), spendersNot: z.array(Address).max(256).optional() })
    .optional(),
  /**
   * The request was made with one of these protocol actions (`lend-a-v3/supply`; `pool-a-v3/*` for every action of a
   * family) and its normalized input meets `input`. POST /execute's requests have no action: they never match.
   */
  protocol: z
    .object({
      actions: z.array(z.string().regex(/^[a-z0-9-]+\/([a-z0-9/-]+|\*)$/).max(128)).min(1).max(64),
      input: z.array(ValueConditionSchema).max(16).optional(),
    })
    .optional(),
  /**
   * What leaves the wallet in the simulated execution (judged on the whole request, docs/policies.md): for some
   * asset of `tokens` (a token address, or `native`), the outflows of it to recipients in `recipients` / not in
   * `recipientsNot` exist and their sum meets `amount`. Outflows the chain cannot trace: doubt (rules.ts).
   */
  outflow: z
    .object({
      tokens: z.array(z.string().regex(/^(0x[0-9a-fA-F]{40}|native)$/)).min(1).max(256).optional(),
      recipients: z.array(Address).min(1).max(256).optional(),
      recipientsNot: z.array(Address).max(256).optional(),
      amount: UintBoundsSchema.optional(),
    })
    .optional(),
  /**
   * The execution's USD value (src/policy/valuation.ts: its outflows, plus the allowances its calls grant to spenders
   * not in `approvalSpenders`) meets these bounds, in USD as decimal strings (`"100"`, `"0.5"`). An asset without a
   * price, or outflows the chain cannot trace: doubt (an accept rule does not accept, a reject rule rejects).
   */
  usd: z
    .object({
      lt: UsdAmount.optional(),
      lte: UsdAmount.optional(),
      gt: UsdAmount.optional(),
      gte: UsdAmount.optional(),
      approvalSpenders: z.array(Address).max(256).optional(),
    })
    .optional(),
});
export type PolicyRule = z.infer<typeof PolicyRuleSchema>;

/** A rolling window: a whole number of seconds, minutes, hours or days, at most 31 days. */
export const WINDOW_PATTERN = /^([1-9][0-9]{0,6})(s|m|h|d)$/;
const WINDOW_UNIT_SECONDS = { s: 1, m: 60, h: 3_600, d: 86_400 } as const;
export const MAX_WINDOW_SECONDS = 31 * 86_400;
/** A window's length in seconds (`24h` → 86400); undefined when it does not parse or exceeds 31 days. */
export function windowSeconds(window: string): number | undefined {
  const m = WINDOW_PATTERN.exec(window);
  if (!m) return undefined;
  const seconds = Number(m[1]) * WINDOW_UNIT_SECONDS[m[2] as keyof typeof WINDOW_UNIT_SECONDS];
  return seconds <= MAX_WINDOW_SECONDS ? seconds : undefined;
}

/**
 * A budget over a rolling window: the executions of the policy's scope admitted in the last `window` may cost at
 * most `usd` in all (gas at its maximum fee, and what leaves the wallet) and number at most `count`. The key-level
 * policy's budgets count every agent of the key together; an agent policy's count each agent id on its own, or
 * every agent id it covers together with `per: policy` (a prefix key can open new agent ids: bound the group).
 */
export const BudgetSchema = z
  .object({
    /** Named in refusals and in the policy's status. */
    name: z.string().regex(/^[A-Za-z0-9][A-Za-z0-9_.:-]{0,63}$/),
    /** `30m`, `24h`, `7d`: whole seconds (s), minutes (m), hours (h) or days (d), at most 31 days. */
    window: z.string().refine((w) => windowSeconds(w) !== undefined, { message: 'a window is a whole number of s, m, h or d, at most 31d' }),
    /** The most the window's executions may cost together, in USD (a decimal string, e.g. `50` or `12.5`). */
    usd: z.string().regex(/^(0|[1-9][0-9]{0,11})(\.[0-9]{1,6})?$/).optional(),
    /** `agent` (the default): each agent id has its own window; `policy`: the agents the policy covers share one. */
    per: z.enum(['agent', 'policy']).optional(),
    /** The most executions the window may hold (a YAML policy file's `10` arrives as the text "10": both are read). */
    count: z.preprocess((v) => (typeof v === 'string' && /^(0|[1-9][0-9]{0,6})$/.test(v) ? Number(v) : v), z.number().int().min(0).max(1_000_000)).optional(),
  })
  .refine((b) => b.usd !== undefined || b.count !== undefined, { message: 'a budget limits usd, count or both' });
export type Budget = z.infer<typeof BudgetSchema>;

/** What a budget's window held when the controller last summed it (refreshed periodically, not per execution). */
export const BudgetSpendSchema = z.object({
  budget: z.string(),
  /** The agent id an agent policy's budget was counted for; absent for the key-level policy's. */
  agentId: z.string().optional(),
  /** USD reserved or spent in the window (a decimal string), and executions counted. */
  usd: z.string(),
  count: z.number().int(),
  asOf: z.string(),
});
export type BudgetSpend = z.infer<typeof BudgetSpendSchema>;

export const AgentPolicySpecSchema = z.object({
  /** The ApiClient (key id) whose agents it governs. */
  apiClient: z.string().min(1).max(253),
  /** The agent ids it applies to; absent: every agent of the key (the key-level policy, which bounds the others). */
  agents: AgentScopeSchema.optional(),
  /** The kill switch: requests not yet signed fail with `agent_suspended`, and nothing more is signed. */
  suspended: z.boolean().default(false),
  /** Outside [validFrom, validUntil) the policy accepts nothing (RFC 3339 times, each optional). */
  validFrom: z.string().datetime({ offset: true }).optional(),
  validUntil: z.string().datetime({ offset: true }).optional(),
  rules: z.array(PolicyRuleSchema).max(128).default([]),
  /** Spending limits over rolling windows, each reserved at admission (docs/policies.md "Budgets"). */
  budgets: z.array(BudgetSchema).max(16).optional(),
});
export type AgentPolicySpec = z.infer<typeof AgentPolicySpecSchema>;

export const AgentPolicySchema = z.object({
  apiVersion: z.literal(API_VERSION),
  kind: z.literal('AgentPolicy'),
  metadata: ObjectMetaSchema,
  spec: AgentPolicySpecSchema,
  status: z
    .object({
      /** The spec generation the controller last saw. */
      observedGeneration: z.number().int().optional(),
      /** Each budget's window as last summed, per agent id for an agent policy (the busiest 50). */
      spend: z.array(BudgetSpendSchema).max(50).optional(),
      /** The same in one line, for `kubectl get agentpolicies`: `daily 48.2/50 USD 7/10`. */
      spendSummary: z.string().max(256).optional(),
      /**
       * Never stored: set on the copy the service reads when the object as stored does not match this schema
       * (written past the CLI's checks, e.g. with kubectl). Such a policy accepts nothing (unreadablePolicy).
       */
      unreadable: z.string().max(1024).optional(),
    })
    .optional(),
});
export type AgentPolicy = z.infer<typeof AgentPolicySchema>;

/**
 * What the service reads of an AgentPolicy stored in a shape the schema refuses (`problem` says why): left out,
 * it would lift every limit it sets, so it is kept, fail closed. It covers the agents it names (all of the key's
 * when those cannot be read), keeps its kill switch, and accepts nothing until it is fixed. Undefined when not
 * even its name and key can be read.
 */
export function unreadablePolicy(raw: unknown, problem: string): AgentPolicy | undefined {
  const obj = raw as { metadata?: unknown; spec?: { apiClient?: unknown; agents?: unknown; suspended?: unknown } } | null;
  const metadata = ObjectMetaSchema.safeParse(obj?.metadata);
  const apiClient = z.string().min(1).max(253).safeParse(obj?.spec?.apiClient);
  if (!metadata.success || !apiClient.success) return undefined;
  const agents = AgentScopeSchema.safeParse(obj?.spec?.agents);
  return {
    apiVersion: API_VERSION,
    kind: 'AgentPolicy',
    metadata: metadata.data,
    spec: { apiClient: apiClient.data, ...(agents.success && { agents: agents.data }), suspended: obj?.spec?.suspended === true, rules: [] },
    status: { unreadable: problem.slice(0, 1024) },
  };
}
