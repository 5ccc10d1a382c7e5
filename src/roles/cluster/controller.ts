import { priceSources } from '../../policy/index.ts';
import { createRedisArchive } from '../../archive/redis.ts';
import { clusterNamespace } from './config.ts';
import { startControllerManager } from '../../controller/manager.ts';
import { serviceControllers } from '../../controller/serviceControllers.ts';
import { Metrics } from '../../metrics/index.ts';
import { startOpsServer } from '../../ops/server.ts';
import { createPaymentPolicies } from '../../payments/policies.ts';
import { claimSettlement } from '../../payments/settlementClaim.ts';
import { paymentTermsOf } from '../../payments/terms.ts';
import { createX402Facilitator } from '../../payments/x402/index.ts';
import { closeRedis, connectRedis, redisPasswordFromEnv } from '../../redis/connect.ts';
import { createKubeStore } from '../../store/kube/index.ts';
import { createLeaseElector } from '../../store/kube/lease.ts';
import { kubeWebhookSecrets } from '../../webhooks/secrets/kube.ts';
import { connectChainWorkers } from './connect.ts';
import { loadKubeConfig, loadRoleContext, parse, roleOptions, runUntilSignal } from './runtime.ts';
import { protocolsByChain } from '../../protocols/config.ts';
import { nativeUsdPriceOf } from '../../config/chainConfig.ts';
import { FAMILIES } from '../../protocols/index.ts';

/**
 * `agent-wallet controller`: the reconcilers (execution, webhook delivery, retention). Run two replicas: they elect a leader
 * through a coordination.k8s.io Lease and only the leader reconciles, so no request is ever advanced by two
 * processes at once; the follower stands by with its connections open and takes over when the lease lapses.
 *
 * A leader that cannot renew its lease stops reconciling before the lease can expire (renewDeadline <
 * leaseDuration) and exits: Kubernetes restarts it as a follower, the other replica takes over.
 */
export async function runController(argv: string[]): Promise<number> {
  const { values } = parse(argv, roleOptions);
  const ctx = await loadRoleContext('controller', values);
  const { config, log } = ctx;
  const namespace = clusterNamespace(config);
  const kubeConfig = loadKubeConfig(values.kubeconfig);

  const metrics = new Metrics();
  metrics.setLeader('controller', false);
  const store = createKubeStore({ kubeConfig, namespace, logger: log });
  const redis = connectRedis(config.redis.url, { ...redisPasswordFromEnv(), name: ctx.identity, logger: log });
  const archive = createRedisArchive(redis);
  const workers = connectChainWorkers(config, log, metrics);
  // x402 settlements are asked for by the leader only (the reconcilers run there) and sent by each chain's worker,
  // which owns the settler's nonces: a new leader finds them where the old one left them. Verification reads
  // through the workers too: the controller needs no RPC URL.
  const x402 = config.x402.enabled
    ? createX402Facilitator({
        chains: config.chains.map((c) => ({ chainId: c.chainId, worker: workers.get(c.name)! })),
        beforeSend: claimSettlement(store, namespace),
      })
    : undefined;
  const payments = createPaymentPolicies({
    store,
    namespace,
    terms: paymentTermsOf(config.chains),
    settings: config.payments,
    x402,
    logger: log.child({ component: 'payments' }),
  });
  // The API clients' webhook signing secrets: immutable Secrets, read by name (the Role grants get only).
  const webhookSecrets = kubeWebhookSecrets({ kubeConfig, namespace });

  let stopping = false;
  const elector = createLeaseElector({
    kubeConfig,
    namespace,
    name: config.controller.leaseName,
    identity: ctx.identity,
    leaseDurationSeconds: config.controller.leaseDurationSeconds,
    renewDeadlineSeconds: config.controller.renewDeadlineSeconds,
    retryPeriodSeconds: config.controller.retryPeriodSeconds,
    logger: log,
  });
  const ops = await startOpsServer({ port: ctx.opsPort, registry: metrics.registry, ready: () => !stopping });
  log.info({ namespace, lease: config.controller.leaseName, opsPort: ops.port }, 'controller started; electing a leader');

  const manager = startControllerManager({
    store,
    namespace,
    controllers: serviceControllers({
      store,
      namespace,
      workers,
      payments,
      archive,
      retentionSeconds: config.controller.retentionSeconds,
      nativeUsdPrice: nativeUsdPriceOf(config.chains),
      spendStatusMs: config.controller.spendStatusSeconds * 1000,
      admissionRetryMs: config.controller.admissionRetryMs,
      paymentGraceMs: config.payments.graceSeconds * 1000,
      protocols: protocolsByChain(config.chains, FAMILIES),
      families: FAMILIES,
      prices: priceSources(config.chains, workers),
      webhooks: { secrets: webhookSecrets, settings: config.webhooks },
      metrics,
      logger: log,
    }),
    elector,
    onLeadingChanged: (leading) => {
      metrics.setLeader('controller', leading);
      log.info(leading ? 'leading: the reconcilers run' : 'not leading: the reconcilers stopped');
      // Lost the lease without being asked to stop: whatever ran may overlap the next leader. The controllers
      // are stopped; exit, and the pod restarts as a follower.
      if (!leading && !stopping) {
        log.error('lost the leader lease: exiting');
        process.exit(1);
      }
    },
    logger: log,
  });
  manager.done.catch((err: unknown) => {
    log.error({ err }, 'leader election failed');
    process.exit(1);
  });

  return runUntilSignal(log, async () => {
    stopping = true;
    await manager.stop(); // stops the reconcilers, then releases the lease: the other replica leads within one retry period
    for (const w of workers.values()) await w.close();
    webhookSecrets.close();
    await store.close();
    await closeRedis(redis);
    await ops.close();
  });
}
