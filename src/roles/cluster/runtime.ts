import { hostname } from 'node:os';
import { KubeConfig } from '@kubernetes/client-node';
import { pino, type Logger as PinoLogger } from 'pino';
import { CliError, parse } from '../../lib/args.ts';
import { ConfigError, loadClusterConfig, type ClusterConfig } from './config.ts';
import { startTracingFromEnv, stopTracing } from '../../lib/tracing.ts';

/** Options every cluster role takes. */
export const roleOptions = {
  config: { type: 'string' },
  kubeconfig: { type: 'string' },
  'ops-port': { type: 'string' },
} as const;

export const DEFAULT_CONFIG_PATH = '/etc/agent-wallet/config.yaml';

export interface RoleContext {
  config: ClusterConfig;
  log: PinoLogger;
  /** Port of the ops server (/metrics, /livez, /readyz): --ops-port, AGENT_WALLET_OPS_PORT, or the config. */
  opsPort: number;
  /** Pod identity (POD_NAME, else host-pid): the leader-election holder and the Redis client name. */
  identity: string;
}

export async function loadRoleContext(
  role: string,
  values: { config?: string | undefined; 'ops-port'?: string | undefined },
  env = process.env,
): Promise<RoleContext> {
  const path = values.config ?? env.AGENT_WALLET_CONFIG ?? DEFAULT_CONFIG_PATH;
  let config: ClusterConfig;
  try {
    config = await loadClusterConfig(path);
  } catch (e) {
    if (e instanceof ConfigError) throw new CliError(e.message);
    throw e;
  }
  const opsPort = Number(values['ops-port'] ?? env.AGENT_WALLET_OPS_PORT ?? config.ops.port);
  if (!Number.isInteger(opsPort) || opsPort < 0 || opsPort > 65535) throw new CliError(`invalid ops port ${values['ops-port']}`);
  const identity = env.POD_NAME ?? `${hostname()}-${process.pid}`;
  const log = pino({ level: config.logLevel, base: { role, pod: identity } });
  // Request traces when the chart sets OTEL_EXPORTER_OTLP_ENDPOINT (tracing.enabled); off otherwise.
  if (await startTracingFromEnv(role, env)) log.info({ endpoint: env.OTEL_EXPORTER_OTLP_TRACES_ENDPOINT ?? env.OTEL_EXPORTER_OTLP_ENDPOINT }, 'tracing on');
  return { config, log, opsPort, identity };
}

/** In a pod: the mounted ServiceAccount; elsewhere: --kubeconfig, $KUBECONFIG or ~/.kube/config. */
export function loadKubeConfig(path: string | undefined): KubeConfig {
  const kc = new KubeConfig();
  if (path !== undefined) kc.loadFromFile(path);
  else kc.loadFromDefault();
  if (kc.getCurrentCluster() === null) throw new CliError('no Kubernetes cluster configured: pass --kubeconfig or run in a pod');
  return kc;
}

/**
 * Runs a role until SIGTERM or SIGINT, then its graceful stop (Kubernetes sends SIGTERM and waits
 * terminationGracePeriodSeconds before SIGKILL). A second signal exits at once.
 */
export function runUntilSignal(log: PinoLogger, stop: () => Promise<void>): Promise<number> {
  return new Promise((resolve) => {
    let stopping = false;
    const onSignal = (signal: NodeJS.Signals) => {
      if (stopping) {
        log.warn({ signal }, 'second signal: exiting now');
        process.exit(130);
      }
      stopping = true;
      log.info({ signal }, 'stopping');
      const t0 = performance.now();
      stop()
        .finally(() => stopTracing().catch(() => undefined)) // the spans still batched are sent before the exit
        .then(
          () => {
            log.info({ ms: Math.round(performance.now() - t0) }, 'stopped');
            resolve(0);
          },
          (err: unknown) => {
            log.error({ err }, 'stop failed');
            resolve(1);
          },
        );
    };
    process.on('SIGTERM', onSignal);
    process.on('SIGINT', onSignal);
  });
}

export { parse };
