/**
 * `npm run bench:cluster`: the load of bench/run.ts against the cluster layout — the gateway, two controller
 * replicas and one chain worker per chain as separate processes, a real kube-apiserver (built from its Go
 * modules, see test/cluster/kube-build) and Redis, the chain workers reached over gRPC. Figures, not
 * assertions; compare them with `npm run bench` (embedded) to see what the API server and gRPC hops cost.
 * Options as bench/run.ts: BENCH_LATENCY_N (default 100), BENCH_SECONDS (15), BENCH_AGENTS (30),
 * BENCH_INFLIGHT (4).
 */
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { startDevnet } from '../src/devnet/devnet.ts';
import { MANIFEST_ENV } from '../test/globalSetup.ts';
import { KUBECONFIG_ENV, REDIS_URL_ENV, startTestCluster } from '../test/support/cluster.ts';
import { startKubeApiServer } from '../test/support/kubeApiServer.ts';
import { startRedis } from '../test/support/redis.ts';
import { loadGenerator, printLatency, printThroughput } from './load.ts';

const LATENCY_N = Number(process.env.BENCH_LATENCY_N ?? 100);
const SECONDS = Number(process.env.BENCH_SECONDS ?? 15);
const AGENTS = Number(process.env.BENCH_AGENTS ?? 30);
const INFLIGHT = Number(process.env.BENCH_INFLIGHT ?? 4);

const dataDir = mkdtempSync(join(tmpdir(), 'aw-bench-cluster-'));
const devnet = await startDevnet({ dataDir, log: () => undefined });
const [api, redis] = await Promise.all([startKubeApiServer(), startRedis({ appendonly: true })]);
process.env[MANIFEST_ENV] = devnet.manifestPath;
process.env[KUBECONFIG_ENV] = api.kubeconfigPath;
process.env[REDIS_URL_ENV] = redis.url;
const t0 = performance.now();
const cluster = await startTestCluster();
console.log(`cluster layout up in ${Math.round(performance.now() - t0)} ms (API server ${api.timings.total} ms before)`);
try {
  const { apiKey } = await cluster.newKey();
  const load = loadGenerator({
    url: cluster.url,
    apiKey,
    store: cluster.store,
    namespace: cluster.namespace,
    counterOf: (chain) => cluster.devnet.chain(chain).testContracts.counter,
  });
  printLatency(await load.latency(LATENCY_N));
  printThroughput(await load.throughput(AGENTS, INFLIGHT, SECONDS), AGENTS, INFLIGHT);
  load.close();
  for (const p of cluster.processes) {
    const text = await fetch(`http://127.0.0.1:${p.opsPort}/metrics`).then((r) => r.text(), () => '');
    const rss = /^process_resident_memory_bytes (\S+)$/m.exec(text)?.[1];
    if (rss) console.log(`  ${p.name}: rss ${(Number(rss) / 2 ** 20).toFixed(0)} MiB`);
  }
} finally {
  await cluster.stop();
  await Promise.all([api.stop(), redis.stop()]);
  await devnet.stop();
  rmSync(dataDir, { recursive: true, force: true });
}
