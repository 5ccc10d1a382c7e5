import type { ExecutionArchive } from '../archive/types.ts';
import type { ChainWorker } from '../chain/types.ts';
import type { ChainName } from '../config/chains.ts';
import { childLogger, type Logger } from '../lib/logger.ts';
import { controllerMetrics, type Metrics } from '../metrics/index.ts';
import type { PaymentPolicies } from '../payments/policy.ts';
import type { ResourceStore } from '../store/types.ts';
import { executionIndexers, startExecutionController } from './execution/controller.ts';
import type { ManagedController } from './manager.ts';
import { startRetentionController } from './retention/index.ts';

export interface ServiceControllerDeps {
  store: ResourceStore;
  namespace: string;
  workers: ReadonlyMap<ChainName, ChainWorker>;
  payments: PaymentPolicies;
  archive: ExecutionArchive;
  /** Finished requests stay in the store this long, then move to the archive. */
  retentionSeconds: number;
  /** How long admission retries a chain that does not answer (default 10 s). */
  admissionRetryMs?: number | undefined;
  /** How often an inclusion short of its chain's confirmation depth is checked again (default 2 s). */
  inclusionPollMs?: number | undefined;
  metrics?: Metrics | undefined;
  logger: Logger;
}

/**
 * The service's controllers, in the order the manager starts them: execution first (it restores the chain
 * workers' in-flight operations before anything reconciles), then retention. A new controller is one entry.
 */
export function serviceControllers(deps: ServiceControllerDeps): ManagedController[] {
  return [
    {
      name: 'execution',
      indexers: executionIndexers(),
      start: (informer) =>
        startExecutionController({
          store: deps.store,
          namespace: deps.namespace,
          workers: deps.workers,
          payments: deps.payments,
          informer,
          admissionRetryMs: deps.admissionRetryMs,
          inclusionPollMs: deps.inclusionPollMs,
          metrics: deps.metrics,
          logger: childLogger(deps.logger, { controller: 'execution' }),
        }),
    },
    {
      name: 'retention',
      start: (informer) =>
        startRetentionController({
          store: deps.store,
          namespace: deps.namespace,
          archive: deps.archive,
          retentionSeconds: deps.retentionSeconds,
          informer,
          metrics: deps.metrics && controllerMetrics(deps.metrics, 'retention'),
          logger: childLogger(deps.logger, { controller: 'retention' }),
        }),
    },
  ];
}
