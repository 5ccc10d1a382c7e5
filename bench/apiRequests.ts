/**
 * `node bin/run-ts.js bench/apiRequests.ts`: how many requests the kube-apiserver serves per execution in the
 * cluster layout, read from the API server's own `apiserver_request_total` before and after N sequential
 * executions (BENCH_REQUESTS, default 50), by verb and subresource. Counts, not timings: they do not depend on
 * the machine. Watches are long-lived and counted once each, so they do not scale with N.
 */
import type { KubeApiServer } from '../test/support/kubeApiServer.ts';
import { withBenchCluster } from './clusterEnv.ts';
import { loadGenerator } from './load.ts';

const N = Number(process.env.BENCH_REQUESTS ?? 50);

/** apiserver_request_total for ExecutionRequests, by "VERB subresource". */
async function counts(api: KubeApiServer): Promise<Map<string, number>> {
  const r = await api.kubectl(['get', '--raw', '/metrics']);
  const out = new Map<string, number>();
  for (const line of r.stdout.split('\n')) {
    if (!line.startsWith('apiserver_request_total{') || !line.includes('resource="executionrequests"')) continue;
    const label = (name: string) => new RegExp(`${name}="([^"]*)"`).exec(line)?.[1] ?? '';
    const key = `${label('verb')}${label('subresource') ? ` ${label('subresource')}` : ''}`;
    out.set(key, (out.get(key) ?? 0) + Number(line.slice(line.lastIndexOf(' ') + 1)));
  }
  return out;
}

await withBenchCluster('api', async ({ cluster, api }) => {
  const { apiKey } = await cluster.newKey();
  const load = loadGenerator({
    url: cluster.url,
    apiKey,
    store: cluster.store,
    namespace: cluster.namespace,
    counterOf: (chain) => cluster.devnet.chain(chain).testContracts.counter,
  });
  await load.latency(5); // warm up: informers listed, connections open
  await new Promise((r) => setTimeout(r, 2_000));
  const before = await counts(api);
  await load.latency(N);
  await new Promise((r) => setTimeout(r, 2_000)); // the last status writes land
  const after = await counts(api);
  load.close();
  console.log(`kube-apiserver requests on ExecutionRequests per execution (${N} sequential executions, cluster layout):`);
  let total = 0;
  for (const key of [...new Set([...before.keys(), ...after.keys()])].sort()) {
    const d = (after.get(key) ?? 0) - (before.get(key) ?? 0);
    if (d === 0) continue;
    total += d;
    console.log(`  ${key.padEnd(18)} ${(d / N).toFixed(2)}`);
  }
  console.log(`  ${'total'.padEnd(18)} ${(total / N).toFixed(2)}`);
});
