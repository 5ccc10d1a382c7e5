import { connectChainWorker, type RemoteChainWorker } from '../../chain/grpc/client.ts';
import type { ClusterConfig } from './config.ts';
import type { ChainName } from '../../config/chains.ts';
import { childLogger, type Logger } from '../../lib/logger.ts';
import { grpcClientInterceptor, type Metrics } from '../../metrics/index.ts';

/** A gRPC client of each configured chain's worker (connections open lazily, and reconnect by themselves). */
export function connectChainWorkers(config: ClusterConfig, log: Logger, metrics: Metrics): Map<ChainName, RemoteChainWorker> {
  return new Map(
    config.chains.map((c) => [
      c.name,
      connectChainWorker(c.name, c.worker.address, { log: childLogger(log, { chain: c.name }), interceptors: [grpcClientInterceptor(metrics)] }),
    ]),
  );
}
