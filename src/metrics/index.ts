export {
  createMetrics,
  Metrics,
  type ExecutionRequestCounter,
  type LeaderRole,
  type MetricsOptions,
  type WebhookDeliveryResult,
  type WebhookAttemptResult,
  type WebhookBacklogState,
  WEBHOOK_BACKLOG_STATES,
} from './registry.ts';
export { controllerMetrics } from './controller.ts';
export { instrumentExecutionInformer, PHASE_INDEX, phaseIndexer, type ExecutionInformerMetricsOptions } from './execution.ts';
export { instrumentLockManager, lockKind } from './locks.ts';
export { bundleObserver, rpcEndpointObserver } from './bundler.ts';
export { watchBalances, type BalanceSource, type BalanceWatch, type BalanceWatchOptions } from './balances.ts';
export { httpMetricsHook, metricsRoutes, UNMATCHED_ROUTE } from './http.ts';
export { grpcClientInterceptor, grpcCodeName, grpcServerInterceptor, observeGrpcCall, type GrpcSide } from './grpc.ts';
export { BoundedLabel, errorCode, OTHER } from './labels.ts';
