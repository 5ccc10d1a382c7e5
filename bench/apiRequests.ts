/**
 * `node bin/run-ts.js bench/apiRequests.ts`: how many requests the kube-apiserver serves per execution in the
 * cluster layout, read from the API server's own `apiserver_request_total` before and after N sequential
 * executions (BENCH_REQUESTS, default 50), by verb and subresource. Counts, not timings: they do not depend on
 * the machine. Watches are long-lived and counted once each, so they do not scale with N.
 */
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { startDevnet } from '../src/devnet/devnet.ts';
import { MANIFEST_ENV } from '../test/globalSetup.ts';
import { KUBECONFIG_ENV, REDIS_URL_ENV, startTestCluster } from '../test/support/cluster.ts';
import { startKubeApiServer } from '../test/support/kubeApiServer.ts';
import { startRedis } from '../test/support/redis.ts';
import { loadGenerator } from './load.ts';

const N = Number(process.env.BENCH_REQUESTS ?? 50);

const dataDir = mkdtempSync(join(tmpdir(), 'aw-bench-api-'));
const devnet = await startDevnet({ dataDir, log: () => undefined });
const [api, redis] = await Promise.all([startKubeApiServer(), startRedis({ appendonly: true })]);
process.env[MANIFEST_ENV] = devnet.manifestPath;
process.env[KUBECONFIG_ENV] = api.kubeconfigPath;
process.env[REDIS_URL_ENV] = redis.url;

/** apiserver_request_total for ExecutionRequests, by "VERB subresource". */
async function counts(): Promise<Map<string, number>> {
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

const cluster = await startTestCluster();
try {
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
  const before = await counts();
  await load.latency(N);
  await new Promise((r) => setTimeout(r, 2_000)); // the last status writes land
  const after = await counts();
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
} finally {
  await cluster.stop();
  await Promise.all([api.stop(), redis.stop()]);
  await devnet.stop();
  rmSync(dataDir, { recursive: true, force: true });
}
