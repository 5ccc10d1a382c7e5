/**
 * The webhook controller on a real embedded store, with a real file secret store and HTTPS transport, for
 * tests: terminal ExecutionRequests are written directly (the webhook controller needs nothing else).
 */
import { rmSync } from 'node:fs';
import { join } from 'node:path';
import { tempDir } from './env.ts';
import type { ExecutionPhase, ExecutionRequest, ExecutionRequestStatus } from '../../src/api/v1alpha1/index.ts';
import { executionRequest } from '../../src/gateway/testing/harness.ts';
import { createKey } from '../../src/keys/manage.ts';
import { createMetrics, type Metrics } from '../../src/metrics/index.ts';
import { Informer } from '../../src/runtime/index.ts';
import { openEmbeddedStore, type EmbeddedStore } from '../../src/store/embedded/index.ts';
import { createHttpsTransport, type HttpsTransportOptions } from '../../src/webhooks/deliver.ts';
import { openFileWebhookSecrets } from '../../src/webhooks/secrets/files.ts';
import type { WebhookSecretStore } from '../../src/webhooks/secrets/types.ts';
import { createSigningSecretSource } from '../../src/webhooks/signingSecrets.ts';
import { withTransitionEvent } from '../../src/webhooks/eventLog.ts';
import { isStoreError } from '../../src/store/types.ts';
import { startWebhookController, webhookIndexers, type WebhookController } from '../../src/controller/webhook/controller.ts';

/** Captured at import, before a test installs fake timers: polling keeps real time under them. */
const realSetTimeout = globalThis.setTimeout;
export const realSleep = (ms: number) => new Promise<void>((resolve) => realSetTimeout(resolve, ms));

export interface HarnessOptions {
  transport?: HttpsTransportOptions;
  retryScheduleSeconds?: number[];
  maxConcurrency?: number;
  maxConcurrencyPerEndpoint?: number;
  maxConcurrencyPerClient?: number;
}

export async function startWebhookHarness(defaults: HarnessOptions = {}) {
  const dir = tempDir('aw-webhook-');
  const store: EmbeddedStore = await openEmbeddedStore({ dir: join(dir, 'store'), fsync: false });
  const secrets: WebhookSecretStore = openFileWebhookSecrets(join(dir, 'webhook-secrets'));
  const informer = new Informer({ store, kind: 'ExecutionRequest', namespace: 'default', indexers: webhookIndexers() });
  informer.start();
  await informer.waitForSync();
  const metrics: Metrics = createMetrics({ defaultMetrics: false });
  let running: WebhookController | undefined;
  let seq = 0;

  const harness = {
    store,
    secrets,
    secretsDir: join(dir, 'webhook-secrets'),
    metrics,
    informer,
    /** Starts (or restarts) the controller; stop() of the previous one first. */
    async start(opts: HarnessOptions = {}): Promise<WebhookController> {
      const o = { ...defaults, ...opts, transport: { ...defaults.transport, ...opts.transport } };
      running = await startWebhookController({
        store,
        informer,
        secrets: createSigningSecretSource(store, secrets),
        transport: createHttpsTransport({ timeoutMs: 5_000, ...o.transport }),
        settings: {
          retryScheduleSeconds: o.retryScheduleSeconds ?? [0.02, 0.02, 0.02, 0.02, 0.02],
          maxConcurrency: o.maxConcurrency ?? 16,
          maxConcurrencyPerEndpoint: o.maxConcurrencyPerEndpoint ?? 4,
          maxConcurrencyPerClient: o.maxConcurrencyPerClient ?? 8,
        },
        metrics,
      });
      return running;
    },
    async stopController(): Promise<void> {
      await running?.stop();
      running = undefined;
    },
    /** An API client with a webhook secret (or none). */
    async client(withSecret = true): Promise<{ id: string; secret: string | undefined }> {
      const { key, webhook_secret } = await createKey(store, { mode: 'sponsored' }, 'default', withSecret ? secrets : undefined);
      return { id: key.id, secret: webhook_secret };
    },
    /** A request of `client` that reached `phase`, as the execution controller leaves it. */
    async finished(client: string, callbackUrl: string | undefined, phase: ExecutionPhase = 'Confirmed', extra: ExecutionRequestStatus = {}) {
      const name = `req-webhook-${++seq}-${Date.now().toString(36)}`;
      const created = await store.create(executionRequest(name, client, { strategyId: 'strategy-7', ...(callbackUrl !== undefined && { callbackUrl }) }));
      const status: ExecutionRequestStatus = {
        phase,
        smartWalletAddress: `0x${'ab'.repeat(20)}`,
        completionTime: new Date().toISOString(),
        ...(phase === 'Confirmed' || phase === 'Reverted' ? { txHash: `0x${'cd'.repeat(32)}`, blockNumber: '42', gasUsed: '90000' } : {}),
        ...(phase === 'Failed' && { failure: { code: 'validation_failed', message: 'AA23 reverted', revertReason: 'nope' } }),
        ...extra,
      };
      return store.updateStatus({ ...created, status });
    },
    /**
     * Moves a request's status as the execution controller's writes do: the event its transition owes is recorded
     * in the same write (withTransitionEvent). Retried on a conflict with the webhook controller's own writes.
     */
    async transition(name: string, change: (s: ExecutionRequestStatus) => ExecutionRequestStatus): Promise<ExecutionRequest> {
      for (;;) {
        const current = await store.get('ExecutionRequest', name);
        try {
          return await store.updateStatus({ ...current, status: withTransitionEvent(current, change({ ...current.status })) });
        } catch (e) {
          if (!isStoreError(e, 'Conflict')) throw e;
        }
      }
    },
    get: (name: string): Promise<ExecutionRequest> => store.get('ExecutionRequest', name),
    /** Polls the store until `check` holds for the request (on real timers, also under fake ones). */
    async until(name: string, check: (r: ExecutionRequest) => boolean, what = 'the expected state', timeoutMs = 20_000): Promise<ExecutionRequest> {
      const deadline = performance.now() + timeoutMs;
      for (;;) {
        const r = await store.get('ExecutionRequest', name);
        if (check(r)) return r;
        if (performance.now() > deadline) throw new Error(`${name}: timed out waiting for ${what}; webhook ${JSON.stringify(r.status?.webhookEvents)}`);
        await realSleep(5);
      }
    },
    async close(): Promise<void> {
      await running?.stop();
      await informer.stop();
      await store.close();
      rmSync(dir, { recursive: true, force: true });
    },
  };
  return harness;
}
export type WebhookHarness = Awaited<ReturnType<typeof startWebhookHarness>>;
