import type { ExecutionArchive } from '../archive/types.ts';
import type { ChainWorker } from '../chain/types.ts';
import type { ChainName } from '../config/chains.ts';
import { childLogger, type Logger } from '../lib/logger.ts';
import { controllerMetrics, type Metrics } from '../metrics/index.ts';
import type { PaymentPolicies } from '../payments/types.ts';
import type { PriceSource } from '../policy/index.ts';
import type { ResourceStore } from '../store/types.ts';
import type { ProtocolsConfig } from '../protocols/config.ts';
import type { AnyFamily } from '../protocols/types.ts';
import { paymentStep, simulationStep } from './execution/admission/steps.ts';
import { budgetStep } from './execution/admission/budget.ts';
import { executionIndexers, startExecutionController } from './execution/controller.ts';
import { InclusionSuspects } from './execution/inclusionAudit.ts';
import { apiClientWatch } from './execution/keyChange.ts';
import { policyIndexers, policyStep, policyWatch } from './execution/admission/policy.ts';
import type { ManagedController } from './manager.ts';
import { startOrderController } from './orders/index.ts';
import { startRetentionController } from './retention/index.ts';
import { startWebhookController, webhookIndexers } from './webhook/index.ts';
import { createHttpsTransport } from '../webhooks/deliver.ts';
import type { Resolver } from '../lib/egress/egress.ts';
import type { WebhookSecretStore } from '../webhooks/secrets/types.ts';
import type { WebhookSettings } from '../webhooks/settings.ts';
import { createSigningSecretSource } from '../webhooks/signingSecrets.ts';

export interface ServiceControllerDeps {
  store: ResourceStore;
  namespace: string;
  workers: ReadonlyMap<ChainName, ChainWorker>;
  payments: PaymentPolicies;
  archive: ExecutionArchive;
  /** Finished requests stay in the store this long, then move to the archive. */
  retentionSeconds: number;
  /** How long admission retries a chain that does not answer (default 10 s). */
  admissionRetryMs?: number | undefined;
  /** How often an inclusion short of its chain's confirmation depth is checked again (default 2 s). */
  inclusionPollMs?: number | undefined;
  paymentGraceMs?: number | undefined;
  /** Each chain's protocols configuration and the families served: a family that plans again at signing needs them. */
  protocols: ReadonlyMap<ChainName, ProtocolsConfig>;
  families: readonly AnyFamily[];
  /** Each chain's USD prices (src/policy/prices), for the policies' USD rules. */
  prices?: ReadonlyMap<ChainName, PriceSource> | undefined;
  /** How often each chain's recorded inclusions are looked at again (default 30 s). */
  inclusionWatchMs?: number | undefined;
  /** USD per native coin of each chain (its configuration's nativeUsdPrice): budgets value gas with it. */
  nativeUsdPrice?: ((chain: ChainName) => number | undefined) | undefined;
  /** How often budgeted policies' spend is written to their status (default 5 s). */
  spendStatusMs?: number | undefined;
  /** How often a pending protocol order (a perp-v2 order a keeper settles later) is looked for again (default 1 s). */
  orderPollMs?: number | undefined;
  /** The completion webhooks' sender. */
  webhooks: WebhookSenderDeps;
  metrics?: Metrics | undefined;
  logger: Logger;
}

export interface WebhookSenderDeps {
  /** Where the API clients' signing secrets are (files of the data dir, or Secrets). */
  secrets: WebhookSecretStore;
  settings: WebhookSettings;
  /** Extra trusted CA certificates (PEM): a test receiver's self-signed one. */
  ca?: string | Buffer | undefined;
  /** The resolver seam (default: the system's); tests point names at chosen addresses. */
  resolver?: Resolver | undefined;
}

/**
 * The service's controllers, in the order the manager starts them: execution first (it restores the chain
 * workers' in-flight operations before anything reconciles), then the webhook sender, the order follower, then retention. A new
 * controller is one entry.
 */
export function serviceControllers(deps: ServiceControllerDeps): ManagedController[] {
  // Admission, in order: the calls must succeed, the agent's policies must accept them (they judge the simulation's
  // figures), its most cost must fit the budgets (and is held), then the payment mode decides: nothing is asked or
  // taken for a request a policy or a budget refuses.
  const admission = [simulationStep, policyStep, budgetStep, paymentStep];
  // Requests whose inclusion was found gone: the execution controller judges them, retention leaves them alone until then.
  const inclusionSuspects = new InclusionSuspects();
  return [
    {
      name: 'execution',
      indexers: { ExecutionRequest: executionIndexers(), ApiClient: {}, AgentPolicy: policyIndexers() },
      // A key revoked or given another payment mode, or an agent suspended: its requests waiting for a payment are
      // looked at now.
      watches: [apiClientWatch, policyWatch],
      start: (cache) =>
        startExecutionController({
          store: deps.store,
          namespace: deps.namespace,
          workers: deps.workers,
          payments: deps.payments,
          cache,
          admissionRetryMs: deps.admissionRetryMs,
          inclusionPollMs: deps.inclusionPollMs,
          paymentGraceMs: deps.paymentGraceMs,
          admission,
          replan: { protocols: deps.protocols, families: deps.families },
          prices: deps.prices,
          ...(deps.nativeUsdPrice && { nativeUsdPrice: deps.nativeUsdPrice }),
          spendStatusMs: deps.spendStatusMs,
          inclusionSuspects,
          inclusionWatchMs: deps.inclusionWatchMs,
          metrics: deps.metrics,
          logger: childLogger(deps.logger, { controller: 'execution' }),
        }),
    },
    {
      name: 'webhook',
      indexers: { ExecutionRequest: webhookIndexers() },
      start: (cache) => {
        const { settings } = deps.webhooks;
        return startWebhookController({
          store: deps.store,
          informer: cache.informerFor('ExecutionRequest'),
          secrets: createSigningSecretSource(deps.store, deps.webhooks.secrets, (ns, id) => {
            const clients = cache.informerFor('ApiClient');
            return clients.hasSynced() ? clients.get(id, ns) : undefined;
          }),
          // A transport per leadership term: stop() closes its connections.
          transport: createHttpsTransport({
            timeoutMs: settings.attemptTimeoutMs,
            maxSocketsPerEndpoint: settings.maxConcurrencyPerEndpoint,
            maxSockets: settings.maxConcurrency,
            allowLoopback: settings.allowLoopback,
            ca: deps.webhooks.ca,
            ...(deps.webhooks.resolver && { resolver: deps.webhooks.resolver }),
          }),
          settings,
          metrics: deps.metrics,
          logger: childLogger(deps.logger, { controller: 'webhook' }),
        });
      },
    },
    {
      // After the create of an order a keeper settles later (perp-v2) is confirmed: what the keeper did.
      name: 'orders',
      indexers: { ExecutionRequest: {} },
      start: (cache) =>
        startOrderController({
          store: deps.store,
          informer: cache.informerFor('ExecutionRequest'),
          workers: deps.workers,
          protocols: deps.protocols,
          families: deps.families,
          pollMs: deps.orderPollMs,
          metrics: deps.metrics && controllerMetrics(deps.metrics, 'orders'),
          logger: childLogger(deps.logger, { controller: 'orders' }),
        }),
    },
    {
      name: 'retention',
      indexers: { ExecutionRequest: {} },
      start: (cache) =>
        startRetentionController({
          store: deps.store,
          namespace: deps.namespace,
          archive: deps.archive,
          retentionSeconds: deps.retentionSeconds,
          inclusionSuspects,
          informer: cache.informerFor('ExecutionRequest'),
          metrics: deps.metrics && controllerMetrics(deps.metrics, 'retention'),
          logger: childLogger(deps.logger, { controller: 'retention' }),
        }),
    },
  ];
}
