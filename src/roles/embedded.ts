import { priceSources } from '../policy/index.ts';
import type { ConnectionLimits } from '../http/connections.ts';
import { join } from 'node:path';
import type { FastifyInstance } from 'fastify';
import { pino, type Level } from 'pino';
import { createChainWorker, type LocalChainWorker } from '../chain/index.ts';
import { describeError } from '../chain/revert.ts';
import { nativeUsdPriceOf, type ChainConfig } from '../config/chainConfig.ts';
import type { ChainName } from '../config/chains.ts';
import { DEFAULT_NAMESPACE } from '../api/v1alpha1/index.ts';
import { startControllerManager, type ControllerManager } from '../controller/manager.ts';
import { serviceControllers } from '../controller/serviceControllers.ts';
import { alwaysLeader } from '../lib/leaderElection.ts';
import { buildGateway } from '../gateway/index.ts';
import type { GatewayDeps } from '../gateway/context.ts';
import { protocolsByChain } from '../protocols/config.ts';
import { FAMILIES } from '../protocols/index.ts';
import { createMemoryLockManager } from '../locks/memory.ts';
import { setUpPayments } from '../payments/setup.ts';
import type { PaymentSettings } from '../payments/types.ts';
import { openEmbeddedStore, type EmbeddedStore } from '../store/embedded/index.ts';
import { serveAdminSocket } from '../admin/socket.ts';
import { openFileArchive } from '../archive/files.ts';
import { ensurePrivateDir } from '../lib/privateFs.ts';
import { bundleObserver, rpcEndpointObserver, createMetrics, instrumentLockManager, watchBalances, type Metrics } from '../metrics/index.ts';
import { createCallbackGuard, EMBEDDED_LOOPBACK_SETTING, type Resolver } from '../lib/egress/egress.ts';
import { openFileWebhookSecrets, webhookSecretsDir } from '../webhooks/secrets/files.ts';
import type { WebhookSecretStore } from '../webhooks/secrets/types.ts';
import { WebhookSettingsSchema, type WebhookSettingsInput } from '../webhooks/settings.ts';

export interface EmbeddedServiceOptions {
  dataDir: string;
  chains: readonly ChainConfig[];
  serviceSecret: string;
  /** The protocol families the gateway serves. Default FAMILIES; tests add one of their own. */
  families?: GatewayDeps['families'];
  /** TCP port of the gateway; 0 picks a free one. */
  port?: number;
  host?: string;
  /** Serve key management on `<dataDir>/admin.sock` (the dev role does; tests may not need it). */
  adminSocket?: boolean;
  /** Timeouts and the per-address bound of the gateway's client connections (src/http/connections.ts). */
  connections?: Partial<ConnectionLimits>;
  /** Log level of every role (pino, JSON lines on stdout); default `silent`. */
  logLevel?: Level | 'silent';
  decisionTimeoutMs?: number;
  /** How long admission retries a chain that does not answer (default 10 s). */
  admissionRetryMs?: number;
  /** How often an inclusion short of its chain's confirmation depth is checked again (default 2 s). */
  inclusionPollMs?: number;
  /** How often each chain's recorded inclusions are looked at again (default 30 s; docs/operations.md). */
  inclusionWatchMs?: number;
  /** Finished requests stay in the store this long, then move to the archive (default 1 h). */
  retentionSeconds?: number;
  /** How often budgeted AgentPolicies' spend is written to their status (default 5 s). */
  spendStatusMs?: number;
  /**
   * Called when the store stops for good (a failed write it could not recover from: what is on disk is not what
   * it acknowledged). The dev role exits so a supervisor restarts it from the disk. Default: logged.
   */
  onStoreFatal?: (error: Error) => void;
  /** The service's metrics (served at GET /metrics); tests may pass one without the process metrics. */
  metrics?: Metrics;
  /**
   * Completion webhooks: retry schedule, attempt timeout, concurrency, and `allowLoopback` (development only:
   * a receiver on this machine). `ca` adds trusted CA certificates (a test receiver's self-signed one);
   * `resolver` replaces the system resolver (tests point names at chosen addresses).
   */
  webhooks?: WebhookSettingsInput & { ca?: string | Buffer; resolver?: Resolver };
  /**
   * Payments: the platform fee, quote lifetime and grace, the service's other sending accounts (default
   * DEFAULT_PAYMENT_SETTINGS), and the key of the EOA that settles x402 payments (it pays their gas): each chain
   * worker sends from it (a chain's own `sendingAccounts.x402SettlerKey` wins). Without a settler key, 402s offer
   * X-Payment-Proof only.
   */
  payments?: Partial<PaymentSettings> & {
    x402SettlerKey?: `0x${string}` | undefined;
  };
}

export interface EmbeddedService {
  url: string;
  app: FastifyInstance;
  store: EmbeddedStore;
  workers: ReadonlyMap<ChainName, LocalChainWorker>;
  controllers: ControllerManager;
  metrics: Metrics;
  /** The API clients' webhook signing secrets: files in <dataDir>/webhook-secrets/ (0600). */
  webhookSecrets: WebhookSecretStore;
  stop(): Promise<void>;
}

/**
 * Every role in one process, on the embedded store: the same controller, worker and gateway code a cluster
 * runs, with in-process calls where the cluster has gRPC and in-process locks where it has Redis.
 */
export async function startEmbeddedService(opts: EmbeddedServiceOptions): Promise<EmbeddedService> {
  const level = opts.logLevel ?? 'silent';
  const log = pino({ level });
  // The data directory holds the store, the archive, webhook secrets and the admin socket: the service user's only.
  await ensurePrivateDir(opts.dataDir);
  const store = await openEmbeddedStore({
    dir: join(opts.dataDir, 'store'),
    onFatal: opts.onStoreFatal ?? ((err) => log.fatal({ err }, 'the store stopped for good; restart the service')),
  });
  const stops: (() => Promise<void>)[] = [() => store.close()];
  const stopAll = async () => {
    for (const stop of stops.reverse()) await stop().catch(() => undefined);
  };
  try {
    // Finished requests leave the store after their retention; GET /status reads them here afterwards.
    const archive = await openFileArchive({ dir: join(opts.dataDir, 'archive') });
    stops.push(() => archive.close());
    const metrics = opts.metrics ?? createMetrics();
    const locks = instrumentLockManager(createMemoryLockManager(), metrics);
    const workers = new Map<ChainName, LocalChainWorker>();
    const settlerKey = opts.payments?.x402SettlerKey;
    for (const chainConfig of opts.chains) {
      // The settler key given for the service settles on every chain that has none of its own.
      const config = settlerKey && !chainConfig.sendingAccounts.x402SettlerKey
        ? { ...chainConfig, sendingAccounts: { ...chainConfig.sendingAccounts, x402SettlerKey: settlerKey } }
        : chainConfig;
      const worker = await createChainWorker(config, {
        serviceSecret: opts.serviceSecret,
        locks,
        log: log.child({ role: 'chain-worker', chain: config.name }),
        bundleObserver: bundleObserver(metrics),
        rpcEndpointFailed: rpcEndpointObserver(metrics),
      });
      workers.set(config.name, worker);
      stops.push(() => worker.close());
      const balances = watchBalances(metrics, worker, {
        chain: config.name,
        entryPoint: config.entryPoint,
        paymaster: config.paymaster,
        // Viem's short message: its full one names the RPC URL, which may carry a provider key.
        onError: (e) => log.warn({ chain: config.name, error: describeError(e) }, 'could not read the account balances and paymaster deposit'),
      });
      stops.push(async () => balances.stop());
    }
    const payments = setUpPayments({
      store,
      namespace: DEFAULT_NAMESPACE,
      chains: opts.chains,
      settings: {
        ...(opts.payments?.platformFeeUsd !== undefined && { platformFeeUsd: opts.payments.platformFeeUsd }),
        ...(opts.payments?.quoteTtlSeconds !== undefined && { quoteTtlSeconds: opts.payments.quoteTtlSeconds }),
        ...(opts.payments?.graceSeconds !== undefined && { graceSeconds: opts.payments.graceSeconds }),
        ...(opts.payments?.serviceAccounts !== undefined && { serviceAccounts: opts.payments.serviceAccounts }),
      },
      x402Workers: settlerKey ? workers : undefined,
      logger: log.child({ role: 'payments' }),
    });
    const { ca, resolver, ...webhookInput } = opts.webhooks ?? {};
    const webhookSettings = WebhookSettingsSchema.parse(webhookInput);
    const webhookSecrets = openFileWebhookSecrets(webhookSecretsDir(opts.dataDir));
    // The protocols each chain serves, each family's section checked by its schema: a bad one stops the start.
    const families = opts.families ?? FAMILIES;
    const protocols = protocolsByChain(opts.chains, families);
    // One price source per chain, its cache shared by the controller and the gateway's dry-runs.
    const prices = priceSources(opts.chains, workers);
    const manager = startControllerManager({
      store,
      namespace: DEFAULT_NAMESPACE,
      controllers: serviceControllers({
        store,
        namespace: DEFAULT_NAMESPACE,
        workers,
        payments: payments.policies,
        archive,
        retentionSeconds: opts.retentionSeconds ?? 3_600,
        admissionRetryMs: opts.admissionRetryMs,
        inclusionPollMs: opts.inclusionPollMs,
        inclusionWatchMs: opts.inclusionWatchMs,
        nativeUsdPrice: nativeUsdPriceOf(opts.chains),
        spendStatusMs: opts.spendStatusMs,
        paymentGraceMs: payments.settings.graceSeconds * 1000,
        protocols,
        families,
        prices,
        webhooks: { secrets: webhookSecrets, settings: webhookSettings, ca, resolver },
        metrics,
        logger: log.child({ role: 'controller' }),
      }),
      elector: alwaysLeader(), // one process: it always leads
      onLeadingChanged: (leading) => metrics.setLeader('controller', leading),
      logger: log.child({ role: 'controller' }),
    });
    stops.push(() => manager.stop());
    // Serve only once the controllers reconcile, so the first execute is decided at once; a failed start ends here.
    await Promise.race([manager.leading(), manager.done]);

    const app = await buildGateway({
      store,
      workers,
      payments,
      protocols,
      families,
      prices,
      archive,
      metrics,
      serveMetrics: true,
      logger: level === 'silent' ? false : { level },
      requestLogLevel: 'debug',
      ...(opts.connections && { connections: opts.connections }), // one process in a terminal: requests only with --log-level debug
      callbackGuard: createCallbackGuard({
        allowLoopback: webhookSettings.allowLoopback,
        loopbackSetting: EMBEDDED_LOOPBACK_SETTING,
        ...(resolver && { resolver }),
      }),
      ...(opts.decisionTimeoutMs !== undefined && { decisionTimeoutMs: opts.decisionTimeoutMs }),
    });
    stops.push(() => app.close());
    const address = await app.listen({ port: opts.port ?? 0, host: opts.host ?? '127.0.0.1' });

    if (opts.adminSocket) {
      const admin = await serveAdminSocket(store, opts.dataDir, { webhookSecrets });
      stops.push(() => admin.close());
    }
    let stopped: Promise<void> | undefined;
    return { url: address, app, store, workers, controllers: manager, metrics, webhookSecrets, stop: () => (stopped ??= stopAll()) };
  } catch (e) {
    await stopAll();
    throw e;
  }
}
