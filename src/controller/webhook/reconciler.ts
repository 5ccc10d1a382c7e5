import type { ExecutionRequest, WebhookEventRecord } from '../../api/v1alpha1/index.ts';
import type { Metrics } from '../../metrics/registry.ts';
import { retryOnConflict, type Logger, type ObjectKey, type ReconcileResult } from '../../runtime/index.ts';
import { isStoreError, type ResourceStore } from '../../store/types.ts';
import type { AttemptResult, WebhookTransport } from '../../webhooks/deliver.ts';
import { owedEvents } from '../../webhooks/eventLog.ts';
import { signWebhook } from '../../webhooks/sign.ts';
import type { SigningSecretSource } from '../../webhooks/signingSecrets.ts';
import { endpointOf, type AttemptSlots } from '../../webhooks/slots.ts';
import { afterAttempt, claimAttempt, planDelivery } from './delivery.ts';

export interface WebhookReconcilerDeps {
  store: ResourceStore;
  /** The shared informer's copy of a request: read first, so requests with nothing due cost no API call. */
  cached(namespace: string, name: string): ExecutionRequest | undefined;
  secrets: SigningSecretSource;
  transport: WebhookTransport;
  slots: AttemptSlots;
  retryScheduleSeconds: readonly number[];
  /** Queues a request again: a delivery parked on a full endpoint or client, once a slot frees. */
  enqueue(key: ObjectKey): void;
  /** Aborted when the controller stops: attempts in flight are cut, and their outcome left unrecorded. */
  signal: AbortSignal;
  now?: () => number;
  random?: () => number;
  metrics?: Metrics | undefined;
  logger?: Logger | undefined;
}

/** A parked delivery looks again after this long even if no slot-free wake-up reaches it. */
const PARKED_RECHECK_MS = 30_000;
/** The store is ahead of the cache (a write's watch event is on its way): look again after this, not at once. */
const CACHE_CATCH_UP_MS = 10;

const NO_SECRET_MESSAGE =
  'the API client has no webhook signing secret; an operator creates one with `agent-wallet keys rotate-webhook-secret <id>`';

/**
 * The webhook reconciler: delivers the events one ExecutionRequest owes its callback URL (status.webhookEvents),
 * in order, each at least once. Each attempt is claimed in status first (attempts + 1, state Sending; with the
 * object's resourceVersion as a precondition), then signed with its own timestamp, sent (the event's frozen
 * body), and its result written: Delivered, Gone, Retrying with the next attempt's time, or Abandoned. Once an
 * event's delivery is final the next one is due. The state lives in the request, so a restart or a new leader
 * carries on from it; a claim found in flight (the process died mid-attempt) is sent again, with the same
 * webhook-id, which is what receivers deduplicate by. A request recorded before events were a list (its one
 * delivery in status.webhook) is turned into a list of one at its next claim, its id and body unchanged.
 */
export function createWebhookReconciler(deps: WebhookReconcilerDeps) {
  const now = deps.now ?? (() => Date.now());

  async function reconcile({ namespace, name }: ObjectKey): Promise<ReconcileResult> {
    const cached = deps.cached(namespace, name);
    if (!cached) return { done: true };
    const plan = planDelivery(cached, now());
    if (plan.kind === 'none') return { done: true };
    if (plan.kind === 'wait') return { requeueAfterMs: plan.ms };

    const owner = { endpoint: endpointOf(cached.spec.callbackUrl!), client: `${namespace}/${cached.spec.apiClient}` };
    const release = deps.slots.tryAcquire(owner, `${namespace}/${name}`, () => deps.enqueue({ namespace, name }));
    if (!release) return { requeueAfterMs: PARKED_RECHECK_MS };
    try {
      return await attempt(namespace, name);
    } finally {
      release();
    }
  }

  async function attempt(namespace: string, name: string): Promise<ReconcileResult> {
    // The cached object, no read: the claim below carries its resourceVersion, so a cache that trails the store
    // (another write since) costs a Conflict and a look again once it has caught up, never a second claim.
    const current = deps.cached(namespace, name);
    if (!current) return { done: true };
    const plan = planDelivery(current, now());
    if (plan.kind === 'none') return { done: true };
    if (plan.kind === 'wait') return { requeueAfterMs: plan.ms };

    const events = owedEvents(current);
    const target = events[plan.index]!;
    const claim = claimAttempt(target, now());
    const { webhook: _legacy, ...status } = current.status ?? {};
    let claimed: ExecutionRequest;
    try {
      claimed = await deps.store.updateStatus({ ...current, status: { ...status, webhookEvents: events.with(plan.index, claim) } });
    } catch (e) {
      if (isStoreError(e, 'Conflict')) return { requeueAfterMs: CACHE_CATCH_UP_MS }; // changed meanwhile: look again once the cache has it
      if (isStoreError(e, 'NotFound')) return { done: true };
      throw e;
    }
    // The attempt before this one was claimed and never recorded: count it as failed, interrupted.
    if (target.state === 'Sending') deps.metrics?.webhookAttempted('failed', 0, 'interrupted');

    const started = performance.now();
    const result = await send(current, target.id, target.body);
    if (result.kind === 'aborted') return { done: true }; // stopping: whoever leads next finds Sending and sends again
    const seconds = (performance.now() - started) / 1000;
    const next = afterAttempt(claim, result, deps.retryScheduleSeconds, now(), deps.random);
    await record(claimed, plan.index, claim, next);
    report(current, next, result, seconds);
    if (next.state === 'Retrying') return { requeueAfterMs: Math.max(0, Date.parse(next.nextAttemptTime!) - now()) };
    // Final: the next event, if one is recorded behind it, is due now (one recorded meanwhile enqueues itself).
    return plan.index + 1 < events.length ? { requeueAfterMs: 0 } : { done: true };
  }

  async function send(request: ExecutionRequest, id: string, body: string): Promise<AttemptResult> {
    let headers: Record<string, string>;
    try {
      const secrets = await deps.secrets.secretsFor(request.spec.apiClient, request.metadata.namespace ?? 'default', now());
      if (secrets.length === 0) return { kind: 'failed', cause: 'no_secret', message: NO_SECRET_MESSAGE };
      headers = signWebhook({ id, timestamp: Math.floor(now() / 1000), body }, secrets);
    } catch (e) {
      // The store or the secret store did not answer, or a stored secret is malformed: a failed attempt like
      // any other, retried on the schedule (rather than an error that would claim attempt after attempt).
      return { kind: 'failed', cause: 'secret_unavailable', message: `the signing secret could not be read: ${(e as Error)?.message ?? String(e)}`.slice(0, 300) };
    }
    return deps.transport.send({ url: request.spec.callbackUrl!, body, headers, signal: deps.signal });
  }

  /**
   * Writes the attempt's result over our own claim (the event at `index`); after a Conflict (the execution
   * controller may have recorded another event meanwhile), only if the claim is still there.
   */
  async function record(claimed: ExecutionRequest, index: number, claim: WebhookEventRecord, next: WebhookEventRecord): Promise<void> {
    let base = claimed;
    await retryOnConflict(async () => {
      const list = base.status?.webhookEvents ?? [];
      const w = list[index];
      if (w?.id !== claim.id || w.state !== 'Sending' || w.attempts !== claim.attempts) return; // someone else moved it on
      try {
        await deps.store.updateStatus({ ...base, status: { ...base.status, webhookEvents: list.with(index, next) } });
      } catch (e) {
        if (isStoreError(e, 'Conflict')) base = await deps.store.get('ExecutionRequest', claimed.metadata.name, claimed.metadata.namespace);
        if (!isStoreError(e, 'NotFound')) throw e;
      }
    });
  }

  function report(request: ExecutionRequest, next: WebhookEventRecord, result: Exclude<AttemptResult, { kind: 'aborted' }>, seconds: number): void {
    const m = deps.metrics;
    m?.webhookAttempted(result.kind, seconds, result.kind === 'failed' ? result.cause : undefined);
    const fields = { request: request.metadata.name, webhookId: next.id, event: next.event, attempt: next.attempts, state: next.state, code: next.lastResponseCode };
    switch (next.state) {
      case 'Delivered': {
        const happened = Date.parse(next.time);
        m?.webhookDelivered('delivered', Number.isFinite(happened) ? (now() - happened) / 1000 : undefined);
        deps.logger?.debug(fields, 'webhook delivered');
        break;
      }
      case 'Gone':
        m?.webhookDelivered('gone');
        deps.logger?.info(fields, 'webhook endpoint answered 410 Gone: not tried again');
        break;
      case 'Abandoned':
        m?.webhookDelivered('abandoned');
        deps.logger?.warn({ ...fields, cause: next.lastFailure?.cause }, 'webhook abandoned: every attempt of the schedule failed');
        break;
      default:
        deps.logger?.info({ ...fields, cause: next.lastFailure?.cause, next: next.nextAttemptTime }, 'webhook attempt failed; will retry');
    }
  }

  return { reconcile };
}
