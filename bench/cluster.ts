/**
 * `npm run bench:cluster`: the load of bench/run.ts against the cluster layout — the gateway, two controller
 * replicas and one chain worker per chain as separate processes, a real kube-apiserver (built from its Go
 * modules, see test/cluster/kube-build) and Redis, the chain workers reached over gRPC. Figures, not
 * assertions; compare them with `npm run bench` (embedded) to see what the API server and gRPC hops cost.
 * Options as bench/run.ts: BENCH_LATENCY_N (default 100), BENCH_SECONDS (15), BENCH_AGENTS (30),
 * BENCH_INFLIGHT (4), BENCH_CONFIRM_N (30: the commit → shown latency of execute --wait, bench/confirmation.ts).
 * After the cluster, the same load against the embedded process (every role in one process) on a fresh devnet of
 * the same machine: the cluster's confirmed/s is printed as a fraction of it.
 */
import { randomBytes } from 'node:crypto';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { startDevnet } from '../src/devnet/devnet.ts';
import { createKey } from '../src/keys/manage.ts';
import { startEmbeddedService } from '../src/roles/embedded.ts';
import { withBenchCluster } from './clusterEnv.ts';
import { measureConfirmationLatency, printConfirmationLatency } from './confirmation.ts';
import { loadGenerator, printLatency, printThroughput } from './load.ts';

const LATENCY_N = Number(process.env.BENCH_LATENCY_N ?? 100);
const SECONDS = Number(process.env.BENCH_SECONDS ?? 15);
const AGENTS = Number(process.env.BENCH_AGENTS ?? 30);
const INFLIGHT = Number(process.env.BENCH_INFLIGHT ?? 4);
const CONFIRM_N = Number(process.env.BENCH_CONFIRM_N ?? 30);

let clusterRate = 0;
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
  const sustained = await load.throughput(AGENTS, INFLIGHT, SECONDS);
  printThroughput(sustained, AGENTS, INFLIGHT);
  clusterRate = sustained.confirmed / sustained.elapsedSeconds;
  load.close();
  for (const p of cluster.processes) {
    const text = await fetch(`http://127.0.0.1:${p.opsPort}/metrics`).then((r) => r.text(), () => '');
    const rss = /^process_resident_memory_bytes (\S+)$/m.exec(text)?.[1];
    if (rss) console.log(`  ${p.name}: rss ${(Number(rss) / 2 ** 20).toFixed(0)} MiB`);
  }
});

// The reference: the same load against the embedded process, same machine, same run.
const dataDir = mkdtempSync(join(tmpdir(), 'aw-bench-embedded-'));
const devnet = await startDevnet({ dataDir, log: () => undefined, snapshots: { pollMs: 3_600_000 } });
const service = await startEmbeddedService({ dataDir, chains: devnet.chainConfigs(), serviceSecret: randomBytes(32).toString('hex'), port: 0, connections: { maxConnectionsPerAddress: 0 } });
const { api_key } = await createKey(service.store, { mode: 'sponsored', requestsPerSecond: 100_000, burst: 100_000 }, undefined, service.webhookSecrets);
const embedded = loadGenerator({ url: service.url, apiKey: api_key, store: service.store, counterOf: (chain) => devnet.manifest.chains.find((c) => c.name === chain)!.testContracts.counter });
await embedded.latency(3); // warm: the latency agent's wallet deployed, connections open
const reference = await embedded.throughput(AGENTS, INFLIGHT, SECONDS);
embedded.close();
await service.stop();
await devnet.stop();
rmSync(dataDir, { recursive: true, force: true });
const embeddedRate = reference.confirmed / reference.elapsedSeconds;
console.log(`reference, same run: the embedded process under the same load: ${embeddedRate.toFixed(0)} confirmed/s; cluster / embedded ${(clusterRate / embeddedRate).toFixed(2)}×`);
