import type { BundleObserver } from '../chain/bundler/bundler.ts';
import type { Metrics } from './registry.ts';

/**
 * The Bundler's observer (`BundlerOptions.observer`): bundle transactions by result; for mined ones, the
 * operations they carried, their gasUsed and the gas per operation. `chain` is a configured chain name.
 */
export function bundleObserver(metrics: Metrics): BundleObserver {
  return {
    bundleSent({ chain, operations, result, gasUsed }) {
      metrics.bundles.inc({ chain, result });
      if (gasUsed === undefined) return; // refused or timed out: nothing mined (yet) to measure
      metrics.bundleOperations.observe({ chain }, operations);
      const gas = Number(gasUsed);
      metrics.bundleGasUsed.observe({ chain }, gas);
      if (operations > 0) metrics.bundleGasPerOperation.observe({ chain }, gas / operations);
    },
  };
}

/** The chain worker's `rpcEndpointFailed`: RPC endpoint failures by chain, endpoint (origin) and reason. */
export function rpcEndpointObserver(metrics: Metrics): (chain: string, endpoint: string, reason: 'unreachable' | 'rateLimited') => void {
  return (chain, endpoint, reason) => metrics.rpcEndpointFailures.inc({ chain, endpoint, reason });
}
