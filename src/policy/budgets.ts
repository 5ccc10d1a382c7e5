import { agentInScope, isTerminal, windowSeconds, type AgentPolicy, type AgentScope, type Budget, type ExecutionRequest } from '../api/v1alpha1/index.ts';
import { applicablePolicies } from './applicable.ts';
import { decimalToMicro, formatMicroUsd, weiToMicroUsd } from './usd.ts';

/**
 * Budgets (docs/policies.md "Budgets"): what the executions of a key or an agent admitted in a rolling window may
 * cost together and how many there may be. Pure: the controller's spend ledger sums, this module says what applies,
 * what one request counts, and whether one more fits.
 */


/** One budget as it applies to one request: its window and who shares it. */
export interface BudgetScope {
  policy: string;
  budget: Budget;
  windowMs: number;
  apiClient: string;
  /** An agent policy's budget counts this agent's requests alone; absent: every request of its scope. */
  agentId?: string;
  /** The agent ids an agent policy with `per: policy` covers, which share its window; absent: the key's. */
  agents?: AgentScope;
  limitMicroUsd?: bigint;
}

/** The budgets that bound a request of `agentId` under key `apiClient`, in the order its policies are judged. */
export function budgetsFor(all: readonly AgentPolicy[], apiClient: string, agentId: string): BudgetScope[] {
  return applicablePolicies(all, apiClient, agentId).flatMap((p) =>
    (p.spec.budgets ?? []).map((budget) => ({
      policy: p.metadata.name,
      budget,
      windowMs: windowSeconds(budget.window)! * 1000, // the schema let only parsable windows in
      apiClient,
      ...(p.spec.agents !== undefined && (budget.per === 'policy' ? { agents: p.spec.agents } : { agentId })),
      ...(budget.usd !== undefined && { limitMicroUsd: decimalToMicro(budget.usd) }),
    })),
  );
}

/** Whether a request falls in `scope` (same key; same agent for an agent policy's budget). */
export const inScope = (scope: Pick<BudgetScope, 'apiClient' | 'agentId' | 'agents'>, apiClient: string, agentId: string): boolean =>
  scope.apiClient === apiClient && (scope.agentId === undefined || scope.agentId === agentId) && (scope.agents === undefined || agentInScope(scope.agents, agentId));

/** What a request counts in the windows it falls in. */
export interface Spend {
  apiClient: string;
  agentId: string;
  /** Epoch milliseconds of its reservation. */
  at: number;
  microUsd: bigint;
  /**
   * Unsigned and still able to be signed until then (epoch ms): waiting for its payment, its quote's hold; paid,
   * until it is signed. It counts in every window meanwhile, however long ago it was reserved, so that quotes left
   * unpaid past a short window cannot all be paid and signed at once.
   */
  heldUntil?: number;
}

/**
 * What `req` counts, from its status: nothing without a reservation, or once it failed unsigned or was withdrawn
 * (released: nothing was sent); its actual cost once included (the gas the receipt says at the reservation's price, plus its outflows
 * unless it reverted, when nothing left the wallet); else the reservation, its most.
 */
export function spendOf(req: ExecutionRequest): Spend | undefined {
  const s = req.status;
  const r = s?.spend;
  if (!r) return undefined;
  // Released: failed before it was signed, or signed and withdrawn from the bundler by the kill switch (it fails
  // agent_suspended only once the bundler has confirmed it will never send it: phases/withdraw.ts).
  if (s.phase === 'Failed' && (s.userOperation === undefined || s.failure?.code === 'agent_suspended')) return undefined;
  const base = { apiClient: req.spec.apiClient, agentId: req.spec.agentId, at: Date.parse(r.at) };
  if (s.actualGasCostWei !== undefined && (s.phase === 'Confirmed' || s.phase === 'Reverted')) {
    const gas = weiToMicroUsd(BigInt(s.actualGasCostWei), BigInt(r.nativeUsdMicro));
    return { ...base, microUsd: gas + (s.phase === 'Confirmed' ? BigInt(r.outflowsMicroUsd) : 0n) };
  }
  const held = s.userOperation === undefined ? heldUntil(req) : undefined;
  // Signed and then failed (dropped, never included): nothing was spent, but an inclusion found later would
  // bring it back, so it holds its reservation until its window ends.
  return { ...base, microUsd: BigInt(r.microUsd), ...(held !== undefined && { heldUntil: held }) };
}

/** Until when an unsigned request may still be signed: its quote's hold (waiting for a payment), else for good. */
function heldUntil(req: ExecutionRequest): number | undefined {
  const quote = req.status?.payment?.quote;
  if (req.status?.phase === 'PaymentRequired' && quote) return Date.parse(quote.reservedUntil ?? quote.expiresAt);
  return isTerminal(req.status?.phase) ? undefined : Number.POSITIVE_INFINITY;
}

/** What a window held at one moment. */
export interface WindowSpend {
  microUsd: bigint;
  count: number;
}

/** Why one more execution does not fit: the budget, its figures, and a sentence with them. */
export interface BudgetRefusal {
  policy: string;
  budget: string;
  agentId?: string;
  spent: WindowSpend;
  costMicroUsd: bigint;
  message: string;
}

/**
 * The first budget of `scopes` that one more execution costing `costMicroUsd` would overrun, given what each window
 * already holds; undefined when it fits them all.
 */
export function overrun(scopes: readonly BudgetScope[], spentIn: (scope: BudgetScope) => WindowSpend, costMicroUsd: bigint): BudgetRefusal | undefined {
  for (const scope of scopes) {
    const spent = spentIn(scope);
    const { budget, policy } = scope;
    const who =
      scope.agentId !== undefined
        ? `agent ${JSON.stringify(scope.agentId)}`
        : scope.agents !== undefined
          ? `the agents of policy ${policy}`
          : 'the key';
    const base = { policy, budget: budget.name, ...(scope.agentId !== undefined && { agentId: scope.agentId }), spent, costMicroUsd };
    if (budget.count !== undefined && spent.count + 1 > budget.count) {
      return { ...base, message: `budget ${budget.name} of policy ${policy}: ${budget.count} executions per ${budget.window} for ${who}, ${spent.count} already in the window` };
    }
    if (scope.limitMicroUsd !== undefined && spent.microUsd + costMicroUsd > scope.limitMicroUsd) {
      return {
        ...base,
        message: `budget ${budget.name} of policy ${policy}: ${budget.usd} USD per ${budget.window} for ${who}, spent ${formatMicroUsd(spent.microUsd)}, this execution ${formatMicroUsd(costMicroUsd)}`,
      };
    }
  }
  return undefined;
}

/** The longest window of `scopes`, in ms: a request counted in them is kept that long. */
export const longestWindowMs = (scopes: readonly BudgetScope[]): number => Math.max(0, ...scopes.map((s) => s.windowMs));

