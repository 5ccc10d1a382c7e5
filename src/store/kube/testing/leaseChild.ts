/**
 * Child process of the lease tests: stands for election and prints `started` / `stopped` lines, until it
 * is killed (a replica that dies without releasing its lease) or gets SIGTERM (one that stops gracefully).
 *
 *   leaseChild <kubeconfig> <namespace> <lease> <identity> <leaseSeconds> <renewDeadlineSeconds> <retrySeconds>
 */
import { KubeConfig } from '@kubernetes/client-node';
import { createLeaseElector } from '../lease.ts';

const [kubeconfig, namespace, name, identity, lease, renew, retry] = process.argv.slice(2);
if (!kubeconfig || !namespace || !name || !identity) {
  console.error('usage: leaseChild <kubeconfig> <namespace> <lease> <identity> <leaseSeconds> <renewDeadlineSeconds> <retrySeconds>');
  process.exit(2);
}
const kubeConfig = new KubeConfig();
kubeConfig.loadFromFile(kubeconfig);
const elector = createLeaseElector({
  kubeConfig,
  namespace,
  name,
  identity,
  leaseDurationSeconds: Number(lease),
  renewDeadlineSeconds: Number(renew),
  retryPeriodSeconds: Number(retry),
});
const run = elector.run({
  onStartedLeading: () => void process.stdout.write('started\n'),
  onStoppedLeading: () => void process.stdout.write('stopped\n'),
});
process.on('SIGTERM', () => void elector.stop().then(() => process.exit(0)));
process.stdout.write('running\n');
await run;
