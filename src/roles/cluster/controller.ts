import { createRedisArchive } from '../../archive/redis.ts';
import { connectChainWorker, type RemoteChainWorker } from '../../chain/grpc/client.ts';
import { clusterNamespace } from '../../config/clusterConfig.ts';
import type { ChainName } from '../../config/chains.ts';
import { startExecutionController, type ExecutionController } from '../../controller/execution/controller.ts';
import { startRetentionController, type RetentionController } from '../../controller/retention/index.ts';
import { Metrics, controllerMetrics, grpcClientInterceptor } from '../../metrics/index.ts';
import { startOpsServer } from '../../ops/server.ts';
import { defaultPaymentPolicies } from '../../payments/policy.ts';
import { closeRedis, connectRedis, redisPasswordFromEnv } from '../../redis/connect.ts';
import { createKubeStore } from '../../store/kube/index.ts';
import { createLeaseElector } from '../../store/kube/lease.ts';
import { loadKubeConfig, loadRoleContext, parse, roleOptions, runUntilSignal } from './runtime.ts';

/**
 * `agent-wallet controller`: the reconcilers (execution, retention). Run two replicas: they elect a leader
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
  const workers = new Map<ChainName, RemoteChainWorker>(
    config.chains.map((c) => [
      c.name,
      connectChainWorker(c.name, c.worker.address, { log: log.child({ chain: c.name }), interceptors: [grpcClientInterceptor(metrics)] }),
    ]),
  );
  const payments = defaultPaymentPolicies();

  let leading: { execution: ExecutionController; retention: RetentionController } | undefined;
  let stopping = false;
  const stopLeading = async () => {
    const l = leading;
    leading = undefined;
    metrics.setLeader('controller', false);
    // Reconciles in progress finish (their status writes carry resourceVersion preconditions); nothing new starts.
    await l?.retention.stop(); // first: it shares the execution controller's informer
    await l?.execution.stop();
  };

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

  const election = elector.run({
    onStartedLeading: async (signal) => {
      log.info('leading: starting the reconcilers');
      const execution = await startExecutionController({
        store,
        workers,
        payments,
        namespace,
        admissionRetryMs: config.controller.admissionRetryMs,
        logger: log.child({ controller: 'execution' }),
        metrics,
      });
      const retention = await startRetentionController({
        store,
        archive,
        namespace,
        retentionSeconds: config.controller.retentionSeconds,
        informer: execution.informer,
        metrics: controllerMetrics(metrics, 'retention'),
        logger: log.child({ controller: 'retention' }),
      });
      leading = { execution, retention };
      metrics.setLeader('controller', true);
      // Leadership ended (or a stop began) while the reconcilers were starting: stop them now.
      if (signal.aborted) await stopLeading();
    },
    onStoppedLeading: () => {
      if (stopping) return;
      // Lost the lease without being asked to stop: whatever runs now may overlap the next leader. Stop
      // reconciling and exit; the pod restarts as a follower.
      log.error('lost the leader lease: stopping the reconcilers and exiting');
      void stopLeading().finally(() => process.exit(1));
    },
  });
  election.catch((err: unknown) => {
    log.error({ err }, 'leader election failed');
    process.exit(1);
  });

  return runUntilSignal(log, async () => {
    stopping = true;
    await stopLeading();
    await elector.stop(); // releases the lease: the other replica leads within one retry period
    for (const w of workers.values()) await w.close();
    await store.close();
    await closeRedis(redis);
    await ops.close();
  });
}
