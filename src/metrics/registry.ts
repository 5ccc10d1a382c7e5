import { collectDefaultMetrics, Counter, Gauge, Histogram, Registry } from 'prom-client';
import { EXECUTION_PHASES, type ExecutionPhase } from '../api/v1alpha1/index.ts';
import type { ChainName } from '../config/chains.ts';

/**
 * The service's Prometheus metrics: every family is defined here, so this file is the list an SRE reads
 * (docs/operations.md mirrors it). Names follow Prometheus conventions: the `agentwallet_` prefix, base units
 * in the name (`_seconds`), `_total` on counters. Label values come from small sets only (see labels.ts).
 *
 * Each process role builds its own Metrics, with its own Registry, never prom-client's global one: the
 * embedded mode and the tests run several roles, and several whole services, in one process; a global registry
 * would refuse the second registration of a name, and worse, would mix one service's figures into another's.
 * A Registry per service instance also means nothing outlives the instance it describes.
 */

/** Seconds, for durations from milliseconds (a reconcile) to an hour (a request parked for payment). */
const DURATION_BUCKETS = [0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1, 2.5, 5, 10, 30, 60, 300, 900, 3600];
/** Seconds, for in-process work: queue waits, reconciles, lock waits, gRPC and HTTP calls. */
const FAST_BUCKETS = [0.0005, 0.001, 0.0025, 0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1, 2.5, 5, 10, 30];

export type ExecutionRequestCounter = (phase: ExecutionPhase, chain: ChainName) => number;

/**
 * How a webhook delivery ended: the endpoint answered 2xx; it answered 410 (gone: never tried again); every
 * attempt of the retry schedule failed.
 */
export type WebhookDeliveryResult = 'delivered' | 'gone' | 'abandoned';

/** What one webhook attempt got: 2xx, 410, or a failure (counted by cause in webhook_failures_total). */
export type WebhookAttemptResult = 'delivered' | 'gone' | 'failed';

/** Owed webhook deliveries by state: not started yet (pending), an attempt in flight (sending), waiting to retry. */
export const WEBHOOK_BACKLOG_STATES = ['pending', 'sending', 'retrying'] as const;
export type WebhookBacklogState = (typeof WEBHOOK_BACKLOG_STATES)[number];
export type WebhookBacklogCounter = (state: WebhookBacklogState) => number;

/**
 * What a look at a finished request's inclusion found changed (src/controller/execution/inclusionJudge.ts): moved
 * (the chain re-mined it elsewhere; it stays as it was), resent (gone; sent again), inclusion_lost (gone and no
 * longer includable: failed), payment_lost (its payment's transaction is gone: failed, not executed for free).
 */
export const INCLUSION_CHANGE_RESULTS = ['moved', 'resent', 'inclusion_lost', 'payment_lost'] as const;
export type InclusionChangeResult = (typeof INCLUSION_CHANGE_RESULTS)[number];

/** Why inclusions were looked up again: the leader's start, or the periodic look at each chain. */
export type InclusionCheckTrigger = 'start' | 'watch';

/** The roles that elect a leader (only the controller today). */
export type LeaderRole = 'controller';

export interface MetricsOptions {
  /**
   * prom-client's default metrics: process CPU, memory, file descriptors, event-loop lag, GC, heap (default
   * true). They keep their standard names (`process_*`, `nodejs_*`) rather than our prefix: those are the
   * names every client library and the stock Node.js dashboards use.
   */
  defaultMetrics?: boolean;
}

export class Metrics {
  readonly registry = new Registry();

  // ── requests ───────────────────────────────────────────────────────────────────────────────────────────
  #requests: { count: ExecutionRequestCounter; chains: readonly ChainName[] } | undefined;

  /** Computed at scrape time from the execution controller's informer cache (see execution.ts). */
  readonly executionRequests = new Gauge({
    name: 'agentwallet_execution_requests',
    help: 'ExecutionRequests by phase and chain, as the (leading) execution controller’s cache holds them',
    labelNames: ['phase', 'chain'] as const,
    registers: [this.registry],
    collect: () => this.#collectRequests(),
  });
  readonly phaseDuration = new Histogram({
    name: 'agentwallet_execution_phase_duration_seconds',
    help: 'Time an ExecutionRequest spent in a phase, observed when it leaves the phase',
    labelNames: ['phase', 'chain'] as const,
    buckets: DURATION_BUCKETS,
    registers: [this.registry],
  });
  readonly executionDuration = new Histogram({
    name: 'agentwallet_execution_duration_seconds',
    help: 'Time from acceptance to a terminal phase, by that phase (the outcome)',
    labelNames: ['outcome', 'chain'] as const,
    buckets: DURATION_BUCKETS,
    registers: [this.registry],
  });

  // ── controllers (controller-runtime's names) ───────────────────────────────────────────────────────────
  readonly workqueueDepth = new Gauge({
    name: 'agentwallet_workqueue_depth',
    help: 'Keys waiting in a controller’s work queue for a worker',
    labelNames: ['controller'] as const,
    registers: [this.registry],
  });
  readonly workqueueAdds = new Counter({
    name: 'agentwallet_workqueue_adds_total',
    help: 'Keys added to a controller’s work queue (adds of a key already waiting are not counted)',
    labelNames: ['controller'] as const,
    registers: [this.registry],
  });
  readonly workqueueRetries = new Counter({
    name: 'agentwallet_workqueue_retries_total',
    help: 'Keys put back in a controller’s work queue with backoff after a failed reconcile',
    labelNames: ['controller'] as const,
    registers: [this.registry],
  });
  readonly workqueueQueueDuration = new Histogram({
    name: 'agentwallet_workqueue_queue_duration_seconds',
    help: 'Time a key waited in a controller’s work queue before a worker took it',
    labelNames: ['controller'] as const,
    buckets: FAST_BUCKETS,
    registers: [this.registry],
  });
  readonly workqueueWorkDuration = new Histogram({
    name: 'agentwallet_workqueue_work_duration_seconds',
    help: 'Time a worker spent on a key',
    labelNames: ['controller'] as const,
    buckets: FAST_BUCKETS,
    registers: [this.registry],
  });
  readonly reconcileTotal = new Counter({
    name: 'agentwallet_reconcile_total',
    help: 'Reconciles by result: success, requeue_after, error (retried with backoff), terminal_error (not retried)',
    labelNames: ['controller', 'result'] as const,
    registers: [this.registry],
  });
  readonly reconcileErrors = new Counter({
    name: 'agentwallet_reconcile_errors_total',
    help: 'Failed reconciles (retried or terminal) by the error’s code',
    labelNames: ['controller', 'code'] as const,
    registers: [this.registry],
  });
  readonly policyDecisions = new Counter({
    name: 'agentwallet_policy_decisions_total',
    help:
      "AgentPolicy decisions on requests of keys that have policies: where (gateway: the early refusal before anything is created; " +
      'controller: admission, the kill switch) and the outcome (allowed, policy_denied, agent_suspended)',
    labelNames: ['where', 'decision'] as const,
    registers: [this.registry],
  });
  readonly executionInternalErrors = new Counter({
    name: 'agentwallet_execution_internal_errors_total',
    help: 'Requests failed with internal_error: an unexpected error while admitting one (step admission) or judging its payment (step payment)',
    labelNames: ['step'] as const,
    registers: [this.registry],
  });
  readonly inclusionChanges = new Counter({
    name: 'agentwallet_execution_inclusion_changes_total',
    help: 'Finished requests whose inclusion was found changed: moved (re-mined elsewhere, still as it was), resent (gone: broadcasting again), inclusion_lost and payment_lost (failed)',
    labelNames: ['chain', 'result'] as const,
    registers: [this.registry],
  });
  readonly inclusionChecks = new Counter({
    name: 'agentwallet_inclusion_checks_total',
    help: 'Inclusions of finished requests looked up on chain again, by trigger: start (the leader began), watch (the periodic look)',
    labelNames: ['chain', 'trigger'] as const,
    registers: [this.registry],
  });
  readonly reconcileTime = new Histogram({
    name: 'agentwallet_reconcile_time_seconds',
    help: 'Time a reconcile took',
    labelNames: ['controller'] as const,
    buckets: FAST_BUCKETS,
    registers: [this.registry],
  });

  // ── locks ──────────────────────────────────────────────────────────────────────────────────────────────
  readonly lockWait = new Histogram({
    name: 'agentwallet_lock_wait_seconds',
    help: 'Time from asking for a lock to running under it, by the key’s kind (nonce, executor)',
    labelNames: ['lock'] as const,
    buckets: FAST_BUCKETS,
    registers: [this.registry],
  });
  readonly lockFailures = new Counter({
    name: 'agentwallet_lock_acquire_failures_total',
    help: 'Lock requests that failed before running under the lock (e.g. Redis unavailable)',
    labelNames: ['lock'] as const,
    registers: [this.registry],
  });

  // ── RPC endpoints ──────────────────────────────────────────────────────────────────────────────────────
  readonly rpcEndpointFailures = new Counter({
    name: 'agentwallet_rpc_endpoint_failures_total',
    help: 'Calls a chain RPC endpoint (by origin) failed: unreachable (no connection, timeout, 5xx: the next endpoint is used) or rateLimited (429: backed off)',
    labelNames: ['chain', 'endpoint', 'reason'] as const,
    registers: [this.registry],
  });

  // ── bundles ────────────────────────────────────────────────────────────────────────────────────────────
  readonly bundles = new Counter({
    name: 'agentwallet_bundles_total',
    help: 'Bundle transactions by result: included, reverted (mined, failed), refused (by the node), timeout (no receipt in time)',
    labelNames: ['chain', 'result'] as const,
    registers: [this.registry],
  });
  readonly bundleOperations = new Histogram({
    name: 'agentwallet_bundle_operations',
    help: 'UserOperations per mined bundle transaction',
    labelNames: ['chain'] as const,
    buckets: [1, 2, 4, 8, 16, 32, 64, 128],
    registers: [this.registry],
  });
  readonly bundleGasUsed = new Histogram({
    name: 'agentwallet_bundle_gas_used',
    help: 'gasUsed of mined bundle transactions (the sum is the gas the executors paid for)',
    labelNames: ['chain'] as const,
    buckets: [100_000, 200_000, 500_000, 1_000_000, 2_000_000, 5_000_000, 10_000_000, 20_000_000, 30_000_000],
    registers: [this.registry],
  });
  readonly bundleGasPerOperation = new Histogram({
    name: 'agentwallet_bundle_gas_per_operation',
    help: 'gasUsed of a mined bundle transaction divided by its operations',
    labelNames: ['chain'] as const,
    buckets: [30_000, 40_000, 50_000, 60_000, 80_000, 100_000, 150_000, 200_000, 300_000, 500_000, 1_000_000],
    registers: [this.registry],
  });

  // ── the service's accounts on chain (balances.ts: read on a timer by each chain worker) ─────────────────────
  readonly accountBalance = new Gauge({
    name: 'agentwallet_account_balance_wei',
    help: 'Native balance of a service account (executor-N, x402-settler, faucet) in wei (a float: exact to 2^53 wei)',
    labelNames: ['chain', 'account', 'address'] as const,
    registers: [this.registry],
  });
  readonly paymasterDeposit = new Gauge({
    name: 'agentwallet_paymaster_deposit_wei',
    help: 'The paymaster’s deposit at the EntryPoint (EntryPoint.balanceOf(paymaster)) in wei',
    labelNames: ['chain', 'paymaster'] as const,
    registers: [this.registry],
  });
  readonly balancesUpdated = new Gauge({
    name: 'agentwallet_balances_updated_timestamp_seconds',
    help: 'When the chain’s account balances and paymaster deposit were last read (unix seconds): stale figures show here',
    labelNames: ['chain'] as const,
    registers: [this.registry],
  });

  // ── webhooks (the webhook controller, on the leader) ───────────────────────────────────────────────────
  #webhookBacklog: WebhookBacklogCounter | undefined;

  readonly webhookAttempts = new Counter({
    name: 'agentwallet_webhook_attempts_total',
    help: 'Webhook delivery attempts by result: delivered (2xx), gone (410), failed (see webhook_failures_total)',
    labelNames: ['result'] as const,
    registers: [this.registry],
  });
  readonly webhookFailures = new Counter({
    name: 'agentwallet_webhook_failures_total',
    help: 'Failed webhook attempts by cause: server_error, throttled, client_error, redirect, timeout, connection, tls, dns, blocked_address, no_secret, secret_unavailable, interrupted',
    labelNames: ['cause'] as const,
    registers: [this.registry],
  });
  readonly webhookDeliveries = new Counter({
    name: 'agentwallet_webhook_deliveries_total',
    help: 'Webhook deliveries that ended, by result: delivered, gone (410: not retried), abandoned (every attempt failed)',
    labelNames: ['result'] as const,
    registers: [this.registry],
  });
  readonly webhookDeliveryLatency = new Histogram({
    name: 'agentwallet_webhook_delivery_latency_seconds',
    help: 'Time from a request reaching its terminal state to its webhook being delivered (2xx), retries included',
    buckets: [0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1, 2.5, 5, 10, 30, 60, 300, 1800, 7200, 36000, 86400, 259200],
    registers: [this.registry],
  });
  readonly webhookAttemptDuration = new Histogram({
    name: 'agentwallet_webhook_attempt_duration_seconds',
    help: 'Time one webhook attempt took, from sending to the answer (or the failure)',
    buckets: FAST_BUCKETS,
    registers: [this.registry],
  });
  /** Computed at scrape time from the webhook controller's informer cache. */
  readonly webhookBacklog = new Gauge({
    name: 'agentwallet_webhook_backlog',
    help: 'Webhook deliveries still owed, by state: pending (not started), sending (attempt in flight), retrying (waiting for the next attempt)',
    labelNames: ['state'] as const,
    registers: [this.registry],
    collect: () => this.#collectWebhookBacklog(),
  });

  // ── gateway (HTTP) ─────────────────────────────────────────────────────────────────────────────────────
  readonly httpRequests = new Counter({
    name: 'agentwallet_http_requests_total',
    help: 'Gateway HTTP requests by route pattern, method and status code',
    labelNames: ['route', 'method', 'status'] as const,
    registers: [this.registry],
  });
  readonly httpDuration = new Histogram({
    name: 'agentwallet_http_request_duration_seconds',
    help: 'Gateway HTTP request latency by route pattern and method',
    labelNames: ['route', 'method'] as const,
    buckets: FAST_BUCKETS,
    registers: [this.registry],
  });

  // ── gRPC (chain workers serve, controllers and gateways call) ──────────────────────────────────────────
  readonly grpcServerHandled = new Counter({
    name: 'agentwallet_grpc_server_handled_total',
    help: 'gRPC calls served, by full method name and status code',
    labelNames: ['method', 'code'] as const,
    registers: [this.registry],
  });
  readonly grpcServerHandling = new Histogram({
    name: 'agentwallet_grpc_server_handling_seconds',
    help: 'Time to serve a gRPC call, by full method name',
    labelNames: ['method'] as const,
    buckets: FAST_BUCKETS,
    registers: [this.registry],
  });
  readonly grpcClientHandled = new Counter({
    name: 'agentwallet_grpc_client_handled_total',
    help: 'gRPC calls made, by full method name and status code (client-side codes included: DEADLINE_EXCEEDED, UNAVAILABLE)',
    labelNames: ['method', 'code'] as const,
    registers: [this.registry],
  });
  readonly grpcClientHandling = new Histogram({
    name: 'agentwallet_grpc_client_handling_seconds',
    help: 'Time until a gRPC call made got its status, by full method name',
    labelNames: ['method'] as const,
    buckets: FAST_BUCKETS,
    registers: [this.registry],
  });

  // ── leader election ────────────────────────────────────────────────────────────────────────────────────
  readonly leader = new Gauge({
    name: 'agentwallet_leader',
    help: '1 while this process holds the role’s leader lease, else 0',
    labelNames: ['role'] as const,
    registers: [this.registry],
  });

  constructor(opts: MetricsOptions = {}) {
    if (opts.defaultMetrics ?? true) collectDefaultMetrics({ register: this.registry });
  }

  /** The Content-Type of what `scrape()` returns (Prometheus text format 0.0.4). */
  get contentType(): string {
    return this.registry.contentType;
  }

  /** The exposition of every metric, as a /metrics endpoint serves it. */
  scrape(): Promise<string> {
    return this.registry.metrics();
  }

  /**
   * Makes `agentwallet_execution_requests` count with `count` at each scrape (a series per phase and chain,
   * zeros included, so an alert can tell "none" from "not reported"). One source at a time; call the returned
   * function to detach it (e.g. on losing the leader lease), after which the gauge reports nothing.
   */
  countExecutionRequestsWith(count: ExecutionRequestCounter, chains: readonly ChainName[]): () => void {
    if (this.#requests) throw new Error('agentwallet_execution_requests already has a source');
    const source = { count, chains };
    this.#requests = source;
    return () => {
      if (this.#requests === source) this.#requests = undefined;
    };
  }

  /** A delivery ended; `latencySeconds` (terminal state → 2xx) only when it was delivered. */
  webhookDelivered(result: WebhookDeliveryResult, latencySeconds?: number): void {
    this.webhookDeliveries.inc({ result });
    if (result === 'delivered' && latencySeconds !== undefined && latencySeconds >= 0) this.webhookDeliveryLatency.observe(latencySeconds);
  }

  /** One attempt ended after `seconds`; a failure with its cause. */
  webhookAttempted(result: WebhookAttemptResult, seconds: number, cause?: string): void {
    this.webhookAttempts.inc({ result });
    this.webhookAttemptDuration.observe(seconds);
    if (result === 'failed') this.webhookFailures.inc({ cause: cause ?? 'unknown' });
  }

  /** Makes `agentwallet_webhook_backlog` count with `count` at each scrape; call the result to detach it. */
  countWebhookBacklogWith(count: WebhookBacklogCounter): () => void {
    if (this.#webhookBacklog) throw new Error('agentwallet_webhook_backlog already has a source');
    this.#webhookBacklog = count;
    return () => {
      if (this.#webhookBacklog === count) this.#webhookBacklog = undefined;
    };
  }

  setLeader(role: LeaderRole, leading: boolean): void {
    this.leader.set({ role }, leading ? 1 : 0);
  }

  #collectWebhookBacklog(): void {
    this.webhookBacklog.reset();
    const count = this.#webhookBacklog;
    if (!count) return;
    for (const state of WEBHOOK_BACKLOG_STATES) this.webhookBacklog.set({ state }, count(state));
  }

  #collectRequests(): void {
    this.executionRequests.reset();
    const source = this.#requests;
    if (!source) return;
    for (const chain of source.chains) {
      for (const phase of EXECUTION_PHASES) this.executionRequests.set({ phase, chain }, source.count(phase, chain));
    }
  }
}

/** A Metrics with its own Registry; see the file comment for why never the global one. */
export function createMetrics(opts: MetricsOptions = {}): Metrics {
  return new Metrics(opts);
}
