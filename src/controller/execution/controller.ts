import { ANNOTATIONS, DEFAULT_NAMESPACE, requestIdTimeMs, type ExecutionRequest } from '../../api/v1alpha1/index.ts';
import { isTerminal } from '../../api/v1alpha1/index.ts';
import type { ChainWorker, OperationOutcome } from '../../chain/types.ts';
import type { ChainName } from '../../config/chains.ts';
import { controllerMetrics } from '../../metrics/controller.ts';
import { instrumentExecutionInformer, PHASE_INDEX, phaseIndexer } from '../../metrics/execution.ts';
import type { Metrics } from '../../metrics/registry.ts';
import type { PaymentPolicies } from '../../payments/types.ts';
import { creditOf } from '../../payments/credit.ts';
import { createHeldAmounts, quotesOf } from '../../payments/uniqueAmounts.ts';
import type { ResourceStore } from '../../store/types.ts';
import { Controller, Informer, type ControllerHooks, type Logger } from '../../runtime/index.ts';
import { createExecutionReconciler } from './reconciler.ts';
import { createInFlightRestorer, inFlightOperation, withRestore } from './restorer.ts';

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
  /**
   * The shared ExecutionRequest informer (the controller manager's), built with `executionIndexers()`; it must be
   * started by its owner. Default: an informer of our own, stopped by stop().
   */
  informer?: Informer<'ExecutionRequest'>;
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
  };
}

/**
 * Wires the execution reconciler to an informer and a work queue, restores the chain workers' view of the
 * operations still in flight (so a restart never reuses a nonce), and routes pushed outcomes to requests.
 */
export async function startExecutionController(opts: ExecutionControllerOptions) {
  const namespace = opts.namespace ?? DEFAULT_NAMESPACE;
  const ownInformer = opts.informer === undefined;
  const informer =
    opts.informer ??
    new Informer({
      store: opts.store,
      kind: 'ExecutionRequest',
      namespace,
      relistPeriodMs: 10 * 60_000,
      indexers: executionIndexers(),
      ...(opts.logger && { logger: opts.logger }),
    });

  const restorer = createInFlightRestorer(opts.store, namespace, opts.workers);
  // A worker that restarted in its own process refuses to sign until restored: the reconciler's workers restore and retry.
  const workers = new Map([...opts.workers].map(([chain, w]) => [chain, withRestore(w, () => restorer.restore(chain))]));
  // Outcomes the workers pushed, until the request's reconcile takes them: it need not ask again over gRPC.
  const pushed = new Map<string, OperationOutcome>();
  const reconciler = createExecutionReconciler({
    store: opts.store,
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
    onInternalError: (step) => opts.metrics?.executionInternalErrors.inc({ step }),
    cached: (ns, name) => informer.get(name, ns),
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
    reconcile: ({ namespace: ns, name }) => reconciler.reconcile(ns, name),
    concurrency: opts.concurrency ?? 64,
    // Status writes that do not move the phase (e.g. submit attempts) need no new reconcile.
    updatePredicate: (a, b) => a.status?.phase !== b.status?.phase || a.metadata.generation !== b.metadata.generation,
    ...(opts.hooks && { hooks: opts.hooks }),
    ...(opts.metrics && { metrics: controllerMetrics(opts.metrics, 'execution') }),
    ...(opts.logger && { logger: opts.logger }),
  });

  if (ownInformer) informer.start();
  await informer.waitForSync();
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
    async stop(): Promise<void> {
      for (const u of unsubscribe) u();
      await controller.stop({ drain: false });
      if (ownInformer) await informer.stop();
      detachMetrics?.();
    },
  };
}
export type ExecutionController = Awaited<ReturnType<typeof startExecutionController>>;
