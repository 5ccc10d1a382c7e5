import { isTerminal, type ExecutionRequest } from '../../api/v1alpha1/index.ts';
import { controllerMetrics } from '../../metrics/controller.ts';
import type { Metrics, WebhookBacklogState } from '../../metrics/registry.ts';
import { Controller, type ControllerHooks, type Informer, type Logger } from '../../runtime/index.ts';
import type { ResourceStore } from '../../store/types.ts';
import type { WebhookTransport } from '../../webhooks/deliver.ts';
import { DEFAULT_WEBHOOK_SETTINGS, type WebhookSettings } from '../../webhooks/settings.ts';
import type { SigningSecretSource } from '../../webhooks/signingSecrets.ts';
import { AttemptSlots } from '../../webhooks/slots.ts';
import { owedDeliveries } from '../../webhooks/eventLog.ts';
import { planDelivery } from './delivery.ts';
import { createWebhookReconciler } from './reconciler.ts';

export interface WebhookControllerOptions {
  store: ResourceStore;
  /** The controller manager's shared ExecutionRequest informer (with webhookIndexers()), started and synced by its owner. */
  informer: Informer<'ExecutionRequest'>;
  secrets: SigningSecretSource;
  /** Sends attempts (createHttpsTransport); closed by stop(). */
  transport: WebhookTransport;
  settings?: Pick<WebhookSettings, 'retryScheduleSeconds' | 'maxConcurrency' | 'maxConcurrencyPerEndpoint' | 'maxConcurrencyPerClient'>;
  now?: () => number;
  random?: () => number;
  hooks?: ControllerHooks;
  metrics?: Metrics | undefined;
  logger?: Logger | undefined;
}

export interface WebhookController {
  controller: Controller<'ExecutionRequest'>;
  /** Cuts the attempts in flight (they stay claimed: the next leader sends them again) and stops. */
  stop(): Promise<void>;
}

/** Which backlog state a request's next owed delivery is in, for agentwallet_webhook_backlog. */
function backlogState(r: ExecutionRequest): WebhookBacklogState | undefined {
  const plan = planDelivery(r, Number.NEGATIVE_INFINITY);
  if (plan.kind === 'none') return undefined;
  const state = owedDeliveries(r)[plan.index]?.state;
  return state === undefined ? 'pending' : state === 'Sending' ? 'sending' : 'retrying';
}

const recordedEvents = (r: ExecutionRequest): number => r.status?.webhookEvents?.length ?? 0;

export const WEBHOOK_BACKLOG_INDEX = 'webhookBacklog';

/** The informer index the webhook controller reads: owed deliveries by backlog state (for the metric). */
export function webhookIndexers(): Record<string, (r: ExecutionRequest) => readonly string[]> {
  return {
    [WEBHOOK_BACKLOG_INDEX]: (r) => {
      const state = backlogState(r);
      return state === undefined ? [] : [state];
    },
  };
}

/**
 * Wires the webhook reconciler to the shared informer and its own work queue: deliveries never hold up the
 * execution controller's queue, and run `maxConcurrency` attempts at once at most (`maxConcurrencyPerEndpoint`
 * to one endpoint, `maxConcurrencyPerClient` of one API client). Run it on the leader only, like every
 * controller of the manager: one sender at a time.
 */
export async function startWebhookController(opts: WebhookControllerOptions): Promise<WebhookController> {
  const settings = { ...DEFAULT_WEBHOOK_SETTINGS, ...opts.settings };
  const abort = new AbortController();
  let controller: Controller<'ExecutionRequest'> | undefined;
  const reconciler = createWebhookReconciler({
    store: opts.store,
    cached: (namespace, name) => opts.informer.peek(name, namespace), // frozen: the reconciler builds new objects
    secrets: opts.secrets,
    transport: opts.transport,
    slots: new AttemptSlots({ perEndpoint: settings.maxConcurrencyPerEndpoint, perClient: settings.maxConcurrencyPerClient }),
    retryScheduleSeconds: settings.retryScheduleSeconds,
    enqueue: (key) => controller?.enqueue(key),
    signal: abort.signal,
    ...(opts.now && { now: opts.now }),
    ...(opts.random && { random: opts.random }),
    metrics: opts.metrics,
    logger: opts.logger,
  });

  controller = new Controller({
    name: 'webhook',
    informer: opts.informer,
    reconcile: (key) => reconciler.reconcile(key),
    concurrency: settings.maxConcurrency,
    // A request owes more when an event is recorded (or, recorded before events were a list, when it reaches a
    // terminal phase); our own writes requeue themselves.
    updatePredicate: (a, b) => recordedEvents(b) > recordedEvents(a) || (isTerminal(b.status?.phase) && a.status?.phase !== b.status?.phase),
    ...(opts.hooks && { hooks: opts.hooks }),
    ...(opts.metrics && { metrics: controllerMetrics(opts.metrics, 'webhook') }),
    ...(opts.logger && { logger: opts.logger }),
  });
  await controller.start();
  opts.informer.countByIndex(WEBHOOK_BACKLOG_INDEX, ''); // throws now, not at the first scrape, when the index is missing
  const detachBacklog = opts.metrics?.countWebhookBacklogWith((state) => opts.informer.countByIndex(WEBHOOK_BACKLOG_INDEX, state));

  return {
    controller,
    async stop() {
      abort.abort();
      await controller.stop({ drain: false });
      detachBacklog?.();
      opts.transport.close();
    },
  };
}
