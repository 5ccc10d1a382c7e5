/**
 * `npm run bench:cluster`: the load of bench/run.ts against the cluster layout — the gateway, two controller
 * replicas and one chain worker per chain as separate processes, a real kube-apiserver (built from its Go
 * modules, see test/cluster/kube-build) and Redis, the chain workers reached over gRPC. Figures, not
 * assertions; compare them with `npm run bench` (embedded) to see what the API server and gRPC hops cost.
 * Options as bench/run.ts: BENCH_LATENCY_N (default 100), BENCH_SECONDS (15), BENCH_AGENTS (30),
 * BENCH_INFLIGHT (4), BENCH_CONFIRM_N (30: the commit → shown latency of execute --wait, bench/confirmation.ts).
 */
import { withBenchCluster } from './clusterEnv.ts';
import { measureConfirmationLatency, printConfirmationLatency } from './confirmation.ts';
import { loadGenerator, printLatency, printThroughput } from './load.ts';

const LATENCY_N = Number(process.env.BENCH_LATENCY_N ?? 100);
const SECONDS = Number(process.env.BENCH_SECONDS ?? 15);
const AGENTS = Number(process.env.BENCH_AGENTS ?? 30);
const INFLIGHT = Number(process.env.BENCH_INFLIGHT ?? 4);
const CONFIRM_N = Number(process.env.BENCH_CONFIRM_N ?? 30);

await withBenchCluster('cluster', async ({ cluster, api, startMs }) => {
  console.log(`cluster layout up in ${Math.round(startMs)} ms (API server ${api.timings.total} ms before)`);
  const { apiKey } = await cluster.newKey();
  const load = loadGenerator({
    url: cluster.url,
    apiKey,
    store: cluster.store,
    namespace: cluster.namespace,
    counterOf: (chain) => cluster.devnet.chain(chain).testContracts.counter,
  });
  printLatency(await load.latency(LATENCY_N));
  printConfirmationLatency(
    await measureConfirmationLatency(
      { url: cluster.url, apiKey, store: cluster.store, namespace: cluster.namespace, counterOf: (chain) => cluster.devnet.chain(chain).testContracts.counter },
      CONFIRM_N,
    ),
  );
  printThroughput(await load.throughput(AGENTS, INFLIGHT, SECONDS), AGENTS, INFLIGHT);
  load.close();
  for (const p of cluster.processes) {
    const text = await fetch(`http://127.0.0.1:${p.opsPort}/metrics`).then((r) => r.text(), () => '');
    const rss = /^process_resident_memory_bytes (\S+)$/m.exec(text)?.[1];
    if (rss) console.log(`  ${p.name}: rss ${(Number(rss) / 2 ** 20).toFixed(0)} MiB`);
  }
});
