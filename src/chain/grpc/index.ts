export { serveChainWorker, CHAIN_WORKER_SERVICE_NAME, type ChainWorkerServer, type ServeChainWorkerOptions } from './server.ts';
export {
  connectChainWorker,
  DEFAULT_DEADLINES_MS,
  type ChainWorkerMethod,
  type ConnectChainWorkerOptions,
  type RemoteChainWorker,
  type RemoteChainWorkerStats,
  type RetryOptions,
} from './client.ts';
export { ChainWorkerRemoteError } from './errors.ts';
export { WireFormatError } from './codec.ts';
