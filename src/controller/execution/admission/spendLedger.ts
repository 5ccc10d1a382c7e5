import { DEFAULT_NAMESPACE, isTerminal, type ExecutionRequest } from '../../../api/v1alpha1/index.ts';
import { inScope, overrun, spendOf, type BudgetRefusal, type BudgetScope, type Spend, type WindowSpend } from '../../../policy/budgets.ts';

/** The informer index of requests holding a reservation, by key: what every budget of the key sums. */
export const SPEND_BY_CLIENT = 'spendByClient';
export const spendIndexers = () => ({ [SPEND_BY_CLIENT]: (r: ExecutionRequest): readonly string[] => (r.status?.spend ? [r.spec.apiClient] : []) });

/**
 * What each budget window holds, for the leading controller (docs/policies.md "Budgets"). The requests are the
 * record: each reservation is written on its own request, with the status admission writes next (waiting for a
 * payment, or signed), so nothing is written per execution to a shared object and a restart sums the same figures
 * from the store. A reservation made and not yet seen back in the informer's cache is held here meanwhile, so two
 * admissions at once cannot both take the last of a budget: the check and the hold happen in one synchronous step.
 */
export class SpendLedger {
  /** Reservations made here, by request, until the cache shows them (or the request ended without them). */
  private readonly pending = new Map<string, Spend & { atIso: string; namespace: string }>();

  constructor(
    private readonly requestsOf: (apiClient: string) => readonly ExecutionRequest[],
    /** The request as the cache has it now (to drop a held reservation it will never show). */
    private readonly requestOf: (namespace: string, name: string) => ExecutionRequest | undefined,
  ) {}

  /** What `scope`'s window holds at `now`, without the request `except` (one being admitted again). */
  spentIn(scope: BudgetScope, now: number, except?: string): WindowSpend {
    const from = now - scope.windowMs;
    let microUsd = 0n;
    let count = 0;
    for (const [name, spend] of this.spends(scope.apiClient)) {
      if (name === except || spend.at <= from || !inScope(scope, spend.apiClient, spend.agentId)) continue;
      microUsd += spend.microUsd;
      count += 1;
    }
    return { microUsd, count };
  }

  /**
   * Holds `costMicroUsd` for `req` in every budget of `scopes` if it fits them all (its own earlier reservation, if
   * any, replaced), else the first budget it overruns. Synchronous: nothing can be reserved in between.
   */
  reserve(req: ExecutionRequest, scopes: readonly BudgetScope[], costMicroUsd: bigint, at: Date): BudgetRefusal | undefined {
    const name = req.metadata.name;
    const refusal = overrun(scopes, (scope) => this.spentIn(scope, at.getTime(), name), costMicroUsd);
    if (refusal) return refusal;
    this.pending.set(name, {
      apiClient: req.spec.apiClient,
      agentId: req.spec.agentId,
      at: at.getTime(),
      atIso: at.toISOString(),
      namespace: req.metadata.namespace ?? DEFAULT_NAMESPACE,
      microUsd: costMicroUsd,
    });
    return undefined;
  }

  /** The spends of a key's requests: the cache's, and the reservations held here it does not show yet. */
  spends(apiClient: string): Map<string, Spend> {
    const out = new Map<string, Spend>();
    for (const req of this.requestsOf(apiClient)) {
      const spend = spendOf(req);
      if (spend) out.set(req.metadata.name, spend);
    }
    for (const [name, held] of this.pending) {
      if (held.apiClient !== apiClient) continue;
      if (this.settled(name, held)) this.pending.delete(name);
      else out.set(name, held);
    }
    return out;
  }

  /**
   * Whether a held reservation is over: the cache shows it written (the request's own record counts from then on),
   * or the request is gone, or ended unsigned without it (its admission stopped after the budget step: released).
   */
  private settled(name: string, held: { atIso: string; namespace: string }): boolean {
    const req = this.requestOf(held.namespace, name);
    if (!req) return true;
    if (req.status?.spend?.at === held.atIso) return true;
    return isTerminal(req.status?.phase) && req.status?.userOperation === undefined;
  }
}
