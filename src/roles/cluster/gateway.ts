import { priceSources } from '../../policy/index.ts';
import { CliError } from '../../lib/args.ts';
import { clusterNamespace } from './config.ts';
import { buildGateway } from '../../gateway/index.ts';
import { createRedisArchive } from '../../archive/redis.ts';
import { createRedisRateLimiter } from '../../ratelimit/redis.ts';
import { Metrics } from '../../metrics/index.ts';
import { startOpsServer } from '../../ops/server.ts';
import { closeRedis, connectRedis, redisPasswordFromEnv } from '../../redis/connect.ts';
import { createKubeStore } from '../../store/kube/index.ts';
import { paymentTermsOf } from '../../payments/terms.ts';
import { protocolsByChain } from '../../protocols/config.ts';
import { FAMILIES } from '../../protocols/index.ts';
import { CLUSTER_LOOPBACK_SETTING, createCallbackGuard } from '../../lib/egress/egress.ts';
import { connectChainWorkers } from './connect.ts';
import { loadKubeConfig, loadRoleContext, parse, roleOptions, runUntilSignal } from './runtime.ts';

/**
 * `agent-wallet gateway`: the HTTP API. Creates ExecutionRequests in the API server and waits for the
 * controller's decision through a watch; reaches chain workers over gRPC for wallet, balance and simulate
 * calls; shares rate limits (and reads the archive of finished requests) through Redis. Stateless: scale it
 * horizontally.
 */
export async function runGateway(argv: string[]): Promise<number> {
  const { values } = parse(argv, { ...roleOptions, port: { type: 'string' }, host: { type: 'string' } });
  const ctx = await loadRoleContext('gateway', values);
  const { config, log } = ctx;
  const port = Number(values.port ?? process.env.AGENT_WALLET_PORT ?? config.gateway.port);
  if (!Number.isInteger(port) || port < 0 || port > 65535) throw new CliError(`invalid --port ${values.port}`);
  const namespace = clusterNamespace(config);

  const metrics = new Metrics();
  const store = createKubeStore({ kubeConfig: loadKubeConfig(values.kubeconfig), namespace, logger: log });
  const redis = connectRedis(config.redis.url, { ...redisPasswordFromEnv(), name: ctx.identity, logger: log });
  const workers = connectChainWorkers(config, log, metrics);
  const archive = createRedisArchive(redis);
  const app = await buildGateway({
    store,
    namespace,
    workers,
    payments: { terms: paymentTermsOf(config.chains), settings: config.payments, x402: config.x402.enabled },
    protocols: protocolsByChain(config.chains, FAMILIES),
    prices: priceSources(config.chains, workers),
    rateLimiter: createRedisRateLimiter(redis),
    archive,
    decisionTimeoutMs: config.gateway.decisionTimeoutMs,
    ...(config.gateway.connections && { connections: config.gateway.connections }),
    logger: { level: config.logLevel },
    metrics,
    // allowLoopback is the operator's, in the config file: no API caller can set it.
    callbackGuard: createCallbackGuard({ allowLoopback: config.webhooks.allowLoopback, loopbackSetting: CLUSTER_LOOPBACK_SETTING }),
  });
  const address = await app.listen({ port, host: values.host ?? config.gateway.host });
  let serving = true;
  const ops = await startOpsServer({ port: ctx.opsPort, registry: metrics.registry, ready: () => serving });
  log.info({ address, namespace, opsPort: ops.port }, 'gateway listening');

  return runUntilSignal(log, async () => {
    serving = false; // out of the Service's endpoints first, then finish the requests in progress
    await app.close();
    for (const w of workers.values()) await w.close();
    await store.close();
    await closeRedis(redis);
    await ops.close();
  });
}
