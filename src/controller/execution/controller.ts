import { ANNOTATIONS, DEFAULT_NAMESPACE, requestIdTimeMs, type ExecutionRequest } from '../../api/v1alpha1/index.ts';
import { isTerminal } from '../../api/v1alpha1/index.ts';
import type { ChainWorker, OperationOutcome } from '../../chain/types.ts';
import type { PriceSource } from '../../policy/index.ts';
import type { ChainName } from '../../config/chains.ts';
import { controllerMetrics } from '../../metrics/controller.ts';
import { instrumentExecutionInformer, PHASE_INDEX, phaseIndexer } from '../../metrics/execution.ts';
import type { Metrics } from '../../metrics/registry.ts';
import type { PaymentPolicies } from '../../payments/types.ts';
import { creditOf } from '../../payments/credit.ts';
import { createHeldAmounts, quotesOf } from '../../payments/uniqueAmounts.ts';
import type { ResourceStore } from '../../store/types.ts';
import { attachWatch, Controller, InformerCache, type CacheReader, type ControllerHooks, type Logger } from '../../runtime/index.ts';
import { createInclusionAudit, hasRecordedInclusion, InclusionSuspects, type ScanReport } from './inclusionAudit.ts';
import { apiClientWatch, AWAITING_PAYMENT_BY_KEY, awaitingPaymentByKey } from './keyChange.ts';
import { SIGNED_BY_KEY, signedByKey } from './signedByKey.ts';
import type { AdmissionStep } from './admission/types.ts';
import { POLICIES_BY_CLIENT, policyIndexers } from './admission/policy.ts';
import { SPEND_BY_CLIENT, SpendLedger, spendIndexers } from './admission/spendLedger.ts';
import { startSpendStatus } from './admission/spendStatus.ts';
import { createExecutionReconciler } from './reconciler.ts';
import type { ReplanDeps } from './replan.ts';
import { createInFlightRestorer, inFlightOperation, withRestore } from './restorer.ts';
import { reconcileInTrace } from '../../lib/tracing.ts';
import { traceStatusWrites, traceWorkerCalls } from './traces.ts';

export interface ExecutionControllerOptions {
  store: ResourceStore;
  workers: ReadonlyMap<ChainName, ChainWorker>;
  payments: PaymentPolicies;
  namespace?: string;
  /** Requests reconciled at once; the steps wait on RPCs, so this is well above the core count. */
  concurrency?: number;
  /** See ExecutionReconcilerDeps.admissionRetryMs. */
  admissionRetryMs?: number;
  /** See ExecutionReconcilerDeps.inclusionPollMs. */
  inclusionPollMs?: number;
  /** See ExecutionReconcilerDeps.paymentGraceMs. */
  paymentGraceMs?: number;
  /** See ExecutionReconcilerDeps.admission. */
  admission?: readonly AdmissionStep[];
  /** See ExecutionReconcilerDeps.replan. */
  replan?: ReplanDeps;
  /** See ExecutionReconcilerDeps.prices. */
  prices?: ReadonlyMap<ChainName, PriceSource> | undefined;
  /** See ExecutionReconcilerDeps.nativeUsdPrice. */
  nativeUsdPrice?: (chain: ChainName) => number | undefined;
  /** How often budgeted policies' spend is written to their status (default 5 s). */
  spendStatusMs?: number | undefined;
  /**
   * Finished requests whose inclusion was found gone (inclusionAudit.ts). Shared with retention, which leaves
   * them alone until judged. Default: a registry of our own.
   */
  inclusionSuspects?: InclusionSuspects;
  /** How often each chain's recorded inclusions are looked at again (default 30 s; 0: only at start). */
  inclusionWatchMs?: number | undefined;
  /**
   * How long the start may spend finding and judging lost inclusions before it reconciles anything else (default
   * 10 s): within it, a request whose inclusion is gone is back in flight before a new request can take its
   * nonce. What is left is judged by the running controller.
   */
  inclusionStartBudgetMs?: number;
  /**
   * The shared caches (the controller manager's): ExecutionRequests with `executionIndexers()`, and ApiClients (a
   * waiting request follows its key); started by their owner. Default: caches of our own, stopped by stop().
   */
  cache?: CacheReader;
  hooks?: ControllerHooks;
  /** Reconcile, work-queue and request metrics. Start the controller only while leading: see instrumentExecutionInformer. */
  metrics?: Metrics;
  logger?: Logger;
}

const walletKey = (r: ExecutionRequest): string => `${r.spec.chain}/${r.spec.apiClient}/${r.spec.agentId}`;
const acceptedKey = (r: ExecutionRequest): string => r.metadata.annotations?.[ANNOTATIONS.accepted] ?? r.metadata.name;
/** Admitted but not yet signed, and not parked waiting for a payment: such a request holds later ones back. */
const awaitingSignature = (r: ExecutionRequest): boolean =>
  !isTerminal(r.status?.phase) && r.status?.userOperation === undefined && r.status?.phase !== 'PaymentRequired';

const INCLUSIONS_INDEX = 'recordedInclusions';
const sleep = (ms: number) => new Promise<void>((resolve) => setTimeout(resolve, ms).unref());
/** An auto-mode fee that rides in an operation signed and not yet final. */
const feeInFlight = (r: ExecutionRequest): boolean =>
  r.status?.payment?.paid?.method === 'auto' && (r.status.phase === 'Queued' || r.status.phase === 'Broadcasting');

/** The informer indexes the execution controller reads (and the request metrics, which count by phase). */
export function executionIndexers(): Record<string, (r: ExecutionRequest) => readonly string[]> {
  return {
    unsignedByWallet: (r) => (awaitingSignature(r) ? [walletKey(r)] : []),
    opHash: (r) => {
      const op = inFlightOperation(r);
      return op ? [op.hash.toLowerCase()] : [];
    },
    [PHASE_INDEX]: phaseIndexer,
    // Auto-mode fees signed and not yet final, by wallet: its balance is spoken for by them.
    autoFeesByWallet: (r) => (feeInFlight(r) ? [walletKey(r)] : []),
    // Unused credits, by key and agent: paid requests that failed without executing.
    creditsByAgent: (r) => (creditOf(r) ? [`${r.spec.apiClient}/${r.spec.agentId}`] : []),
    // Requests whose quotes hold amounts (their holds end in time; the reader filters by that).
    heldQuotes: (r) => (quotesOf(r).length > 0 ? [r.spec.chain] : []),
    // Finished requests with an inclusion to look up again (inclusionAudit.ts).
    [INCLUSIONS_INDEX]: (r) => (hasRecordedInclusion(r) ? [r.spec.chain] : []),
    // Requests waiting for a payment, by key: a change of the key re-queues them (keyChange.ts).
    [AWAITING_PAYMENT_BY_KEY]: awaitingPaymentByKey,
    // Signed requests not yet finished, by key: a kill switch turned on re-queues them (phases/withdraw.ts).
    [SIGNED_BY_KEY]: signedByKey,
    // Requests holding a budget reservation, by key (admission/spendLedger.ts).
    ...spendIndexers(),
  };
}

/**
 * Wires the execution reconciler to an informer and a work queue, restores the chain workers' view of the
 * operations still in flight (so a restart never reuses a nonce), and routes pushed outcomes to requests.
 */
export async function startExecutionController(opts: ExecutionControllerOptions) {
  const namespace = opts.namespace ?? DEFAULT_NAMESPACE;
  const ownCache =
    opts.cache === undefined
      ? new InformerCache({ store: opts.store, namespace, indexers: { ExecutionRequest: executionIndexers(), AgentPolicy: policyIndexers() }, ...(opts.logger && { logger: opts.logger }) })
      : undefined;
  const cache = opts.cache ?? ownCache!;
  const informer = cache.informerFor('ExecutionRequest');
  const apiClients = cache.informerFor('ApiClient');
  const policies = cache.informerFor('AgentPolicy');

  const spendLedger = new SpendLedger(
    (apiClient) => informer.byIndex(SPEND_BY_CLIENT, apiClient),
    (ns, name) => informer.peek(name, ns),
  );
  const restorer = createInFlightRestorer(opts.store, namespace, opts.workers);
  // A worker that restarted in its own process refuses to sign until restored: the reconciler's workers restore and retry.
  // Traced (a span per call: simulate, sign, submit, outcome) when tracing is on; the workers themselves otherwise.
  const workers = new Map([...opts.workers].map(([chain, w]) => [chain, traceWorkerCalls(withRestore(w, () => restorer.restore(chain)))]));
  // Outcomes the workers pushed, until the request's reconcile takes them: it need not ask again over gRPC.
  const pushed = new Map<string, OperationOutcome>();
  const suspects = opts.inclusionSuspects ?? new InclusionSuspects();
  const log = opts.logger;
  const audit = createInclusionAudit({
    inclusions: (chain) => informer.byIndex(INCLUSIONS_INDEX, chain),
    workers: opts.workers,
    suspects,
    onChecked: (chain, trigger, n) => opts.metrics?.inclusionChecks.inc({ chain, trigger }, n),
    logger: log,
  });
  const reconciler = createExecutionReconciler({
    store: traceStatusWrites(opts.store),
    workers,
    payments: opts.payments,
    amounts: createHeldAmounts((chain) => informer.byIndex('heldQuotes', chain)),
    autoFeesInFlight: (req) =>
      informer
        .byIndex('autoFeesByWallet', walletKey(req))
        .filter((r) => r.metadata.name !== req.metadata.name)
        .map((r) => ({ token: r.status!.payment!.paid!.token, amountRaw: r.status!.payment!.paid!.amountRaw })),
    creditsFor: (req) =>
      informer
        .byIndex('creditsByAgent', `${req.spec.apiClient}/${req.spec.agentId}`)
        .map(creditOf)
        .filter((c) => c !== undefined)
        .sort((a, b) => (a.expiresAt < b.expiresAt ? -1 : 1)),
    ...(opts.admissionRetryMs !== undefined && { admissionRetryMs: opts.admissionRetryMs }),
    ...(opts.inclusionPollMs !== undefined && { inclusionPollMs: opts.inclusionPollMs }),
    ...(opts.paymentGraceMs !== undefined && { paymentGraceMs: opts.paymentGraceMs }),
    ...(opts.admission && { admission: opts.admission }),
    ...(opts.replan && { replan: opts.replan }),
    ...(opts.prices && { prices: opts.prices }),
    onInternalError: (step) => opts.metrics?.executionInternalErrors.inc({ step }),
    inclusionSuspects: suspects,
    onInclusionChange: (r, result, detail) => {
      opts.metrics?.inclusionChanges.inc({ chain: r.spec.chain, result });
      const fields = { request: r.metadata.name, chain: r.spec.chain, txHash: r.status?.txHash, blockNumber: r.status?.blockNumber, result };
      if (result === 'moved') log?.warn(fields, `inclusion moved: ${detail}`);
      else log?.error(fields, `INCLUSION LOST: ${r.metadata.name} was ${r.status?.phase}; ${detail}`);
    },
    // The cached object itself (frozen: every phase builds new objects from it), not a copy per reconcile.
    cached: (ns, name) => informer.peek(name, ns),
    apiClient: (ns, name) => apiClients.get(name, ns),
    policiesFor: (apiClient) => policies.byIndex(POLICIES_BY_CLIENT, apiClient),
    spendLedger,
    ...(opts.nativeUsdPrice && { nativeUsdPrice: opts.nativeUsdPrice }),
    onPolicyDecision: (r, d) => {
      opts.metrics?.policyDecisions.inc({ where: 'controller', decision: d.allowed ? 'allowed' : d.code });
      // The decision log: every refusal, with what decided it (allowed ones are counted, not logged).
      if (!d.allowed) log?.info({ request: r.metadata.name, apiClient: r.spec.apiClient, agentId: r.spec.agentId, policy: d.policy, rule: d.rule, code: d.code, callIndex: d.callIndex }, `policy refused: ${d.message}`);
    },
    takePushedOutcome: (hash) => {
      const key = hash.toLowerCase();
      const outcome = pushed.get(key);
      pushed.delete(key);
      return outcome;
    },
    earlierUnsigned: (req) => {
      const mine = acceptedKey(req);
      return informer.countByIndex('unsignedByWallet', walletKey(req), (r) => acceptedKey(r) < mine);
    },
  });

  const controller = new Controller({
    name: 'execution',
    informer,
    // In the request's trace when it carries one (src/lib/tracing.ts): a span per reconcile, and the queue wait.
    reconcile: ({ namespace: ns, name }) => reconcileInTrace(() => informer.peek(name, ns), () => reconciler.reconcile(ns, name)),
    concurrency: opts.concurrency ?? 64,
    // Status writes that do not move the phase (e.g. submit attempts) need no new reconcile.
    updatePredicate: (a, b) => a.status?.phase !== b.status?.phase || a.metadata.generation !== b.metadata.generation,
    ...(opts.hooks && { hooks: opts.hooks }),
    ...(opts.metrics && { metrics: controllerMetrics(opts.metrics, 'execution') }),
    ...(opts.logger && { logger: opts.logger }),
  });

  ownCache?.start();
  await Promise.all([informer.waitForSync(), apiClients.waitForSync(), policies.waitForSync()]);
  let controllerStarted = false;
  const startAudit = await auditAtStart();
  for (const chain of opts.workers.keys()) {
    // A worker that cannot be reached now is restored on its first not_restored answer instead.
    await restorer.restore(chain).catch((err: unknown) => opts.logger?.warn({ chain, err }, 'in-flight operations not restored yet'));
  }

  const unsubscribe = [...opts.workers.values()].map((w) =>
    w.onOutcome((hash, outcome) => {
      const requests = informer.byIndex('opHash', hash.toLowerCase());
      if (requests.length > 0) pushed.set(hash.toLowerCase(), outcome); // only ours: the map cannot grow with others'
      for (const r of requests) controller.enqueue(r.metadata);
    }),
  );
  for (const [chain, w] of opts.workers) {
    const off = w.onReconnect?.(() => {
      // The worker may have restarted: give it the operations in flight, then look at each of them now (one it
      // lost is found `unknown` and sent again) instead of at the next outcome poll.
      void restorer
        .restore(chain)
        .catch((err: unknown) => opts.logger?.warn({ chain, err }, 'in-flight operations not restored after a reconnect'))
        .finally(() => {
          for (const r of informer.list((x) => x.spec.chain === chain && inFlightOperation(x) !== undefined)) controller.enqueue(r.metadata);
        });
    });
    if (off) unsubscribe.push(off);
  }
  await controller.start();
  controllerStarted = true;
  const stopSpendStatus = startSpendStatus({ store: opts.store, policies: () => policies.list(), ledger: spendLedger, everyMs: opts.spendStatusMs ?? 5_000, logger: log });
  // On caches of its own, it watches keys itself; on the manager's, the manager attaches the watches it declares.
  const detachKeyWatch = ownCache && attachWatch(cache, apiClientWatch, (key) => controller.enqueue(key));
  // Suspects found from now on (or left by the start) are judged by the running controller.
  const offSuspects = suspects.onAdd((namespace, name) => controller.enqueue({ namespace, name }));
  for (const key of suspects.keys()) controller.enqueue(key);
  const watchMs = opts.inclusionWatchMs ?? 30_000;
  let watching: Promise<unknown> | undefined;
  const watchTimer =
    watchMs > 0
      ? setInterval(() => {
          watching ??= Promise.all(
            [...opts.workers.keys()].map((chain) =>
              audit.scan(chain, 'watch').catch((err: unknown) => log?.warn({ chain, err }, 'the inclusion check did not finish; the next one tries again')),
            ),
          ).finally(() => (watching = undefined));
        }, watchMs)
      : undefined;
  watchTimer?.unref();

  /**
   * The leader's first look at the chains, before anything reconciles: finished requests whose inclusion left the
   * chain are found (inclusionAudit.ts) and judged (inclusionJudge.ts) now, so those sent again are restored as in
   * flight below and no new request takes their nonces. Bounded by inclusionStartBudgetMs; a chain that does not
   * answer is looked at by the periodic check instead.
   */
  async function auditAtStart(): Promise<{ reports: (ScanReport | undefined)[]; ms: number; inTime: boolean }> {
    const started = performance.now();
    const budget = opts.inclusionStartBudgetMs ?? 10_000;
    const work = (async () => {
      const reports = await Promise.all(
        [...opts.workers.keys()].map((chain) =>
          audit.scan(chain, 'start').catch((err: unknown) => {
            log?.warn({ chain, err }, 'inclusions not checked at start (the chain did not answer); the periodic check will');
            return undefined;
          }),
        ),
      );
      // Judged before the controller starts, a few at a time; once it runs, it judges the rest.
      const keys = suspects.keys();
      for (let i = 0; i < keys.length; i += 8) {
        if (controllerStarted || performance.now() - started > budget) break;
        await Promise.all(
          keys.slice(i, i + 8).map(({ namespace, name }) =>
            reconciler.reconcile(namespace, name).catch((err: unknown) => log?.warn({ request: name, err }, 'a lost inclusion was not judged at start; the controller will')),
          ),
        );
      }
      return reports;
    })();
    const inTime = await Promise.race([work.then(() => true), sleep(budget).then(() => false)]);
    const reports = inTime ? await work : [];
    const ms = Math.round(performance.now() - started);
    const checked = reports.reduce((n, r) => n + (r?.checked ?? 0), 0);
    const changed = reports.reduce((n, r) => n + (r?.changed ?? 0), 0);
    log?.info({ ms, checked, changed, inTime }, 'inclusions checked at start');
    return { reports, ms, inTime };
  }
  // Last, so a start that fails leaves no source attached (the next start with the same Metrics would refuse).
  const detachMetrics = opts.metrics
    ? instrumentExecutionInformer(opts.metrics, informer, {
        chains: [...opts.workers.keys()],
        acceptedAt: (r) => requestIdTimeMs(r.metadata.annotations?.[ANNOTATIONS.accepted]),
      })
    : undefined;

  return {
    informer,
    controller,
    /** Queues a request for a reconcile (what the manager's watches of other kinds do). */
    enqueue: (key: { namespace: string; name: string }) => controller.enqueue(key),
    /** What the start's look at the chains found, and how long it took (for the log, tests and figures). */
    startAudit,
    suspects,
    async stop(): Promise<void> {
      if (watchTimer) clearInterval(watchTimer);
      stopSpendStatus();
      offSuspects();
      detachKeyWatch?.();
      for (const u of unsubscribe) u();
      await controller.stop({ drain: false });
      await ownCache?.stop();
      detachMetrics?.();
    },
  };
}
export type ExecutionController = Awaited<ReturnType<typeof startExecutionController>>;
