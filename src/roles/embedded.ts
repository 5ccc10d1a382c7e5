import { join } from 'node:path';
import type { FastifyInstance } from 'fastify';
import { pino, type Level } from 'pino';
import { createChainWorker, type LocalChainWorker } from '../chain/index.ts';
import type { ChainConfig } from '../config/chainConfig.ts';
import type { ChainName } from '../config/chains.ts';
import { startExecutionController, type ExecutionController } from '../controller/execution/controller.ts';
import { buildGateway } from '../gateway/index.ts';
import { createMemoryLockManager } from '../locks/memory.ts';
import { defaultPaymentPolicies } from '../payments/policy.ts';
import { openEmbeddedStore, type EmbeddedStore } from '../store/embedded/index.ts';
import { serveAdminSocket } from '../admin/socket.ts';

export interface EmbeddedServiceOptions {
  dataDir: string;
  chains: readonly ChainConfig[];
  serviceSecret: string;
  /** TCP port of the gateway; 0 picks a free one. */
  port?: number;
  host?: string;
  /** Serve key management on `<dataDir>/admin.sock` (the dev role does; tests may not need it). */
  adminSocket?: boolean;
  /** Log level of every role (pino, JSON lines on stdout); default `silent`. */
  logLevel?: Level | 'silent';
  decisionTimeoutMs?: number;
  /** How long admission retries a chain that does not answer (default 10 s). */
  admissionRetryMs?: number;
}

export interface EmbeddedService {
  url: string;
  app: FastifyInstance;
  store: EmbeddedStore;
  workers: ReadonlyMap<ChainName, LocalChainWorker>;
  controller: ExecutionController;
  stop(): Promise<void>;
}

/**
 * Every role in one process, on the embedded store: the same controller, worker and gateway code a cluster
 * runs, with in-process calls where the cluster has gRPC and in-process locks where it has Redis.
 */
export async function startEmbeddedService(opts: EmbeddedServiceOptions): Promise<EmbeddedService> {
  const level = opts.logLevel ?? 'silent';
  const log = pino({ level });
  const store = await openEmbeddedStore({ dir: join(opts.dataDir, 'store') });
  const stops: (() => Promise<void>)[] = [() => store.close()];
  const stopAll = async () => {
    for (const stop of stops.reverse()) await stop().catch(() => undefined);
  };
  try {
    const locks = createMemoryLockManager();
    const workers = new Map<ChainName, LocalChainWorker>();
    for (const config of opts.chains) {
      const worker = await createChainWorker(config, {
        serviceSecret: opts.serviceSecret,
        locks,
        log: log.child({ role: 'chain-worker', chain: config.name }),
      });
      workers.set(config.name, worker);
      stops.push(() => worker.close());
    }
    const payments = defaultPaymentPolicies();
    const controller = await startExecutionController({
      store,
      workers,
      payments,
      logger: log.child({ role: 'controller' }),
      ...(opts.admissionRetryMs !== undefined && { admissionRetryMs: opts.admissionRetryMs }),
    });
    stops.push(() => controller.stop());

    const app = await buildGateway({
      store,
      workers,
      payments,
      chainTokens: Object.fromEntries(opts.chains.map((c) => [c.name, c.tokens])),
      chainProbe: async (chain) => ({ blockNumber: await workers.get(chain)!.client.getBlockNumber() }),
      logger: level === 'silent' ? false : { level },
      ...(opts.decisionTimeoutMs !== undefined && { decisionTimeoutMs: opts.decisionTimeoutMs }),
    });
    stops.push(() => app.close());
    const address = await app.listen({ port: opts.port ?? 0, host: opts.host ?? '127.0.0.1' });

    if (opts.adminSocket) {
      const admin = await serveAdminSocket(store, opts.dataDir);
      stops.push(() => admin.close());
    }
    let stopped: Promise<void> | undefined;
    return { url: address, app, store, workers, controller, stop: () => (stopped ??= stopAll()) };
  } catch (e) {
    await stopAll();
    throw e;
  }
}
