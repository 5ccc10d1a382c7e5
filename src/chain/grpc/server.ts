import { Server, ServerCredentials, type ChannelOptions, type ServerInterceptor } from '@grpc/grpc-js';
import { HealthImplementation, type ServingStatus } from 'grpc-health-check';
import { silentLogger, type Logger } from '../../lib/logger.ts';
import type { ChainWorker, SendingAccounts } from '../types.ts';
import { ChainWorkerServiceService } from './generated/chainworker/v1/chainworker.ts';
import { createChainWorkerService } from './service.ts';

/** The fully qualified service name: what grpc.health.v1 reports on, and Kubernetes' gRPC probes ask for. */
export const CHAIN_WORKER_SERVICE_NAME = 'agentwallet.chainworker.v1.ChainWorkerService';

export interface ServeChainWorkerOptions {
  /** Interface to listen on. Default 127.0.0.1; a pod listens on 0.0.0.0 (or "::"). */
  host?: string;
  /** 0 picks a free port (tests). */
  port: number;
  log?: Logger;
  /** Default insecure: inside the cluster a NetworkPolicy admits only the controller and the gateway. */
  credentials?: ServerCredentials;
  /** Overrides of the server's channel options (keepalive below). */
  channelOptions?: ChannelOptions;
  /** Around every call (metrics: src/metrics/grpc.ts). */
  interceptors?: ServerInterceptor[];
}

export interface ChainWorkerServer {
  /** The bound port (the one picked when `port` was 0). */
  readonly port: number;
  /**
   * Health goes NOT_SERVING, outcome streams end (clients reconnect elsewhere or later), calls in progress
   * finish for up to `graceMs` (default 10 s), then whatever is left is cut. Does not close the worker: its
   * owner closes it afterwards (the bundler finishes bundles in flight).
   */
  close(graceMs?: number): Promise<void>;
  /** The grpc.health.v1 status of both the service and the server as a whole (""). SERVING after start. */
  setServing(ok: boolean): void;
}

/**
 * Keepalive: the server pings a connection that has been quiet for 30 s and drops it when no answer comes
 * within 10 s, so a controller that vanished without closing its socket does not keep an outcome stream (and
 * its listener) forever. Clients ping too (client.ts); grpc-js servers accept pings at any rate.
 */
const SERVER_CHANNEL_OPTIONS: ChannelOptions = {
  'grpc.keepalive_time_ms': 30_000,
  'grpc.keepalive_timeout_ms': 10_000,
};

/**
 * Serves one chain's worker over gRPC (ChainWorkerService, proto/chainworker/v1) with the standard health
 * service. The process that runs a chain worker in a cluster calls this once.
 *
 * @example
 * const worker = await createChainWorker(config, { serviceSecret, locks, requireRestore: true });
 * const server = await serveChainWorker(worker, { host: '0.0.0.0', port: 50051, log });
 * process.once('SIGTERM', async () => { await server.close(); await worker.close(); });
 */
export async function serveChainWorker(worker: ChainWorker & SendingAccounts, opts: ServeChainWorkerOptions): Promise<ChainWorkerServer> {
  const log = opts.log ?? silentLogger;
  const service = createChainWorkerService(worker, { log });
  const health = new HealthImplementation({ '': 'SERVING', [CHAIN_WORKER_SERVICE_NAME]: 'SERVING' });
  const setHealth = (s: ServingStatus) => {
    health.setStatus('', s);
    health.setStatus(CHAIN_WORKER_SERVICE_NAME, s);
  };

  const server = new Server({ ...SERVER_CHANNEL_OPTIONS, ...opts.channelOptions, ...(opts.interceptors && { interceptors: opts.interceptors }) });
  server.addService(ChainWorkerServiceService, service.implementation);
  health.addToServer(server);

  const host = opts.host ?? '127.0.0.1';
  const target = host.includes(':') && !host.startsWith('[') ? `[${host}]:${opts.port}` : `${host}:${opts.port}`;
  const port = await new Promise<number>((resolve, reject) =>
    server.bindAsync(target, opts.credentials ?? ServerCredentials.createInsecure(), (e, p) => (e ? reject(e) : resolve(p))),
  );
  log.info({ chain: worker.chain, host, port }, 'chain worker serving gRPC');

  let closing: Promise<void> | undefined;
  return {
    port,
    setServing(ok) {
      if (!closing) setHealth(ok ? 'SERVING' : 'NOT_SERVING');
    },
    close(graceMs = 10_000) {
      closing ??= (async () => {
        setHealth('NOT_SERVING');
        service.endStreams();
        const drained = await new Promise<boolean>((resolve) => {
          const timer = setTimeout(() => resolve(false), graceMs);
          server.tryShutdown(() => {
            clearTimeout(timer);
            resolve(true);
          });
        });
        if (!drained) {
          log.warn({ chain: worker.chain, graceMs }, 'chain worker calls still running after the grace period: cutting them');
          server.forceShutdown();
        }
        log.info({ chain: worker.chain, port }, 'chain worker gRPC server stopped');
      })();
      return closing;
    },
  };
}
