import { createChainWorker } from '../../chain/index.ts';
import { serveChainWorker } from '../../chain/grpc/server.ts';
import { describeError } from '../../chain/revert.ts';
import { CliError } from '../../lib/args.ts';
import { clusterChain, ConfigError, workerChainConfig } from './config.ts';
import { canonicalChain } from '../../config/chains.ts';
import { createRedisLockManager } from '../../locks/redis.ts';
import { Metrics, bundleObserver, rpcEndpointObserver, grpcServerInterceptor, instrumentLockManager, watchBalances } from '../../metrics/index.ts';
import { startOpsServer } from '../../ops/server.ts';
import { doctorTarget, runDoctor } from '../../doctor/index.ts';
import { closeRedis, connectRedis, redisPasswordFromEnv } from '../../redis/connect.ts';
import { loadRoleContext, parse, roleOptions, runUntilSignal } from './runtime.ts';

/**
 * `agent-wallet chain-worker --chain <name>`: one chain's worker (wallets, simulation, signing, the bundler)
 * served over gRPC, with its nonce and executor locks in Redis. One replica per chain: the bundler owns the
 * chain's executor keys.
 */
export async function runChainWorker(argv: string[]): Promise<number> {
  const { values } = parse(argv, { ...roleOptions, chain: { type: 'string' } });
  const chainName = canonicalChain(values.chain ?? process.env.AGENT_WALLET_CHAIN ?? '');
  if (!chainName) throw new CliError('--chain must be one of ethereum, base, arbitrum (or eth, arb)');
  const ctx = await loadRoleContext(`chain-worker`, values);
  const { log } = ctx;
  let chain;
  let config;
  try {
    chain = clusterChain(ctx.config, chainName);
    config = workerChainConfig(chain);
  } catch (e) {
    if (e instanceof ConfigError) throw new CliError(e.message);
    throw e;
  }
  const serviceSecret = process.env.AGENT_WALLET_SERVICE_SECRET ?? '';
  if (serviceSecret.length < 32) throw new CliError('AGENT_WALLET_SERVICE_SECRET must be set (at least 32 characters)');

  const metrics = new Metrics();
  const redis = connectRedis(ctx.config.redis.url, { ...redisPasswordFromEnv(), name: ctx.identity, logger: log });
  const redisLocks = createRedisLockManager(redis, { logger: log });
  const worker = await createChainWorker(config, {
    serviceSecret,
    locks: instrumentLockManager(redisLocks, metrics),
    log: log.child({ chain: chainName }),
    bundleObserver: bundleObserver(metrics),
    rpcEndpointFailed: rpcEndpointObserver(metrics),
    // Its own process: after a restart it must hear the in-flight operations before it signs again.
    requireRestore: true,
  });
  // The accounts' balances and the paymaster's deposit as gauges, for the chart's PrometheusRule.
  const balances = watchBalances(metrics, worker, {
    chain: chainName,
    entryPoint: config.entryPoint,
    paymaster: config.paymaster,
    // Viem's short message: its full one names the RPC URL, which may carry a provider key.
    onError: (e) => log.warn({ chain: chainName, error: describeError(e) }, 'could not read the account balances and paymaster deposit'),
  });
  const server = await serveChainWorker(worker, {
    host: '0.0.0.0',
    port: chain.worker.port,
    log: log.child({ chain: chainName }),
    interceptors: [grpcServerInterceptor(metrics)],
  });
  let serving = true;
  const ops = await startOpsServer({ port: ctx.opsPort, registry: metrics.registry, ready: () => serving && redis.status === 'ready' });
  log.info({ chain: chainName, grpcPort: server.port, opsPort: ops.port }, 'chain worker serving');
  // The doctor's checks on this worker's configuration, in the background: each warning or failure is logged with
  // what to do, and the worker serves regardless (a deposit may run low and be refilled without a restart).
  void runDoctor([doctorTarget(config)]).then(
    (results) => {
      for (const r of results.filter((x) => x.status !== 'ok')) log.warn({ chain: chainName, check: r.id, status: r.status, fix: r.fix }, `doctor: ${r.detail}`);
      log.info({ chain: chainName, checks: results.length, failed: results.filter((x) => x.status === 'fail').length }, 'doctor: pre-flight checks done');
    },
    (e: unknown) => log.warn({ chain: chainName, err: e }, 'doctor: the pre-flight checks could not run'),
  );

  return runUntilSignal(log, async () => {
    serving = false;
    balances.stop();
    await server.close(10_000); // NOT_SERVING first, then calls in progress finish
    await worker.close(); // the bundler finishes the bundles it sent
    await redisLocks.close();
    await closeRedis(redis);
    await ops.close();
  });
}
