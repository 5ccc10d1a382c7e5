/**
 * `node bin/run-ts.js bench/traces.ts [embedded|cluster|both]` (default both): where one request's time goes, from
 * its OpenTelemetry trace (src/lib/tracing.ts). N sequential sponsored executes (one agent, Counter.increment) with
 * tracing on, the spans sent to a receiver in this process (test/support/otlpReceiver.ts); per span name: how many
 * per request, when it starts (p50, from the gateway's execute), its duration p50/p95, and its share of
 * execute → Confirmed written (sum of its durations over sum of the requests' totals: nested spans overlap, so the
 * shares do not add up to 100 %). Then the cost of tracing: CPU per confirmed request under load, off and on.
 * Options: BENCH_TRACES_N (default 100); the cost under load: BENCH_TRACES_ROUNDS (default 3 embedded rounds of off, on
 * sampling none, and on), BENCH_TRACES_LOAD_SECONDS (8 per window), BENCH_TRACES_LOAD_AGENTS (30),
 * BENCH_TRACES_LOAD_INFLIGHT (4); BENCH_TRACES_CLUSTER_ROUNDS (default 2: fresh clusters with tracing on and off, alternating).
 * Figures, not assertions; docs/benchmarks.md "Where one request's time goes (traces)".
 */
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { randomBytes } from 'node:crypto';
import type { ChainName } from '../src/config/chains.ts';
import { startDevnet } from '../src/devnet/devnet.ts';
import { createKey } from '../src/keys/manage.ts';
import { startEmbeddedService } from '../src/roles/embedded.ts';
import { epochMs, flushTracing, startTracing, stopTracing, type TracingSettings } from '../src/lib/tracing.ts';
import { startOtlpReceiver, type OtlpReceiver, type ReceivedSpan } from '../test/support/otlpReceiver.ts';
import { withBenchCluster } from './clusterEnv.ts';
import { loadGenerator, pct } from './load.ts';

const N = Number(process.env.BENCH_TRACES_N ?? 100);
const ROUNDS = Number(process.env.BENCH_TRACES_ROUNDS ?? 3);
const LOAD_SECONDS = Number(process.env.BENCH_TRACES_LOAD_SECONDS ?? 8);
const LOAD_AGENTS = Number(process.env.BENCH_TRACES_LOAD_AGENTS ?? 30);
const LOAD_INFLIGHT = Number(process.env.BENCH_TRACES_LOAD_INFLIGHT ?? 4);
const MODE = process.argv[2] ?? 'both';
if (!['embedded', 'cluster', 'both'].includes(MODE)) throw new Error(`usage: bench/traces.ts [embedded|cluster|both], not ${MODE}`);

/** The span every request's trace ends with: the controller's write of the final phase. */
const FINAL = 'status Confirmed';
const DERIVED_RECEIPT = '(receipt → Confirmed written)';

interface Trace {
  id: string;
  t0: number;
  totalMs: number;
  spans: ReceivedSpan[];
}

/** Complete traces of requests that began at or after `since`: a gateway execute and a Confirmed status write. */
function tracesOf(spans: readonly ReceivedSpan[], since: number): Trace[] {
  const byTrace = new Map<string, ReceivedSpan[]>();
  for (const s of spans) byTrace.set(s.traceId, [...(byTrace.get(s.traceId) ?? []), s]);
  const out: Trace[] = [];
  for (const [id, list] of byTrace) {
    const root = list.find((s) => s.name === 'execute' && s.parentSpanId === undefined);
    const finals = list.filter((s) => s.name === FINAL);
    if (!root || finals.length === 0 || root.startMs < since) continue;
    out.push({ id, t0: root.startMs, totalMs: Math.max(...finals.map((s) => s.endMs)) - root.startMs, spans: list });
  }
  return out.sort((a, b) => a.t0 - b.t0);
}

/** Waits (at most `ms`) until `n` complete traces since `since` arrived (other processes export every second). */
async function awaitTraces(receiver: OtlpReceiver, since: number, n: number, ms = 15_000): Promise<Trace[]> {
  const deadline = Date.now() + ms;
  for (;;) {
    await flushTracing();
    const traces = tracesOf(receiver.spans, since);
    const settled = traces.filter((t) => t.spans.some((s) => s.name === 'bundle.send'));
    if (settled.length >= n || Date.now() > deadline) return traces;
    await new Promise((r) => setTimeout(r, 250));
  }
}

function printBreakdown(label: string, traces: Trace[], by: 'scope' | 'service'): void {
  const totals = traces.map((t) => t.totalMs);
  const sumTotal = totals.reduce((a, b) => a + b, 0);
  console.log(`\n${label}: ${traces.length} traces, execute → ${FINAL} p50 ${pct(totals, 50).toFixed(2)} ms, p95 ${pct(totals, 95).toFixed(2)} ms`);
  const rows = new Map<string, { where: string; count: number; starts: number[]; durations: number[] }>();
  for (const t of traces) {
    const perName = new Map<string, { where: string; count: number; start: number; ms: number }>();
    for (const s of t.spans) {
      const where = (by === 'scope' ? s.scope.replace('agent-wallet/', '') : s.service.replace('agent-wallet-', '')) || '?';
      const key = s.name;
      const acc = perName.get(key) ?? { where, count: 0, start: s.startMs - t.t0, ms: 0 };
      acc.count++;
      acc.start = Math.min(acc.start, s.startMs - t.t0);
      acc.ms += s.endMs - s.startMs;
      perName.set(key, acc);
    }
    const sent = t.spans.filter((s) => s.name === 'bundle.send').map((s) => s.endMs);
    const final = Math.max(...t.spans.filter((s) => s.name === FINAL).map((s) => s.endMs));
    if (sent.length > 0) perName.set(DERIVED_RECEIPT, { where: 'derived', count: 1, start: Math.max(...sent) - t.t0, ms: final - Math.max(...sent) });
    for (const [name, acc] of perName) {
      const row = rows.get(name) ?? { where: acc.where, count: 0, starts: [], durations: [] };
      row.count += acc.count;
      row.starts.push(acc.start);
      row.durations.push(acc.ms);
      rows.set(name, row);
    }
  }
  // The slowest trace, span by span: where a tail request's time went.
  const slowest = traces.reduce((a, b) => (b.totalMs > a.totalMs ? b : a));
  const steps = [...slowest.spans].sort((a, b) => a.startMs - b.startMs).map((s) => `${s.name} +${(s.startMs - slowest.t0).toFixed(1)}/${(s.endMs - s.startMs).toFixed(1)}`);
  console.log(`  the slowest (${slowest.totalMs.toFixed(1)} ms), span +start/duration ms: ${steps.join(', ')}`);
  const ordered = [...rows].sort((a, b) => pct(a[1].starts, 50) - pct(b[1].starts, 50) || pct(b[1].durations, 50) - pct(a[1].durations, 50));
  console.log(`  ${'span'.padEnd(32)} ${by.padEnd(16)} ${'/req'.padStart(5)} ${'starts p50'.padStart(11)} ${'p50'.padStart(9)} ${'p95'.padStart(9)} ${'share'.padStart(7)}`);
  for (const [name, row] of ordered) {
    const perReq = row.count / traces.length;
    const share = row.durations.reduce((a, b) => a + b, 0) / sumTotal;
    console.log(
      `  ${name.padEnd(32)} ${row.where.padEnd(16)} ${perReq.toFixed(2).padStart(5)} ${pct(row.starts, 50).toFixed(2).padStart(8)} ms ${pct(row.durations, 50).toFixed(2).padStart(6)} ms ${pct(row.durations, 95).toFixed(2).padStart(6)} ms ${(share * 100).toFixed(1).padStart(6)}%`,
    );
  }
}

async function benchEmbedded(): Promise<void> {
  const receiver = await startOtlpReceiver();
  const settings: TracingSettings = { url: receiver.url, serviceName: 'agent-wallet-embedded', exportDelayMs: 500 };
  // On before the service starts: the controller's worker and status-write wrappers are installed only then.
  await startTracing(settings);
  const dataDir = mkdtempSync(join(tmpdir(), 'aw-bench-traces-'));
  const devnet = await startDevnet({ dataDir, log: () => undefined });
  const service = await startEmbeddedService({ dataDir, chains: devnet.chainConfigs(), serviceSecret: randomBytes(32).toString('hex'), port: 0 });
  try {
    const { api_key } = await createKey(service.store, { mode: 'sponsored', requestsPerSecond: 100_000, burst: 100_000 }, undefined, service.webhookSecrets);
    const counterOf = (chain: ChainName) => devnet.manifest.chains.find((c) => c.name === chain)!.testContracts.counter;
    let load = loadGenerator({ url: service.url, apiKey: api_key, store: service.store, counterOf });
    await load.latency(10); // warm-up: the wallet's deployment, JIT
    const since = epochMs();
    await load.latency(N);
    const traces = await awaitTraces(receiver, since, N);
    printBreakdown(`embedded (one process), ${N} sequential sponsored executes`, traces, 'scope');
    load.close();
    load = loadGenerator({ url: service.url, apiKey: api_key, store: service.store, counterOf }); // fresh keep-alive sockets

    // The cost, under load (CPU per confirmed request, as bench/run.ts measures it): tracing off, on but sampling
    // none (context propagation and the API, nothing recorded or exported), and on; rounds interleaved.
    const modes = { off: undefined, unsampled: { ...settings, sampleRatio: 0 }, on: settings } as const;
    type Mode = keyof typeof modes;
    const cost = Object.fromEntries(Object.keys(modes).map((m) => [m, [] as { cpuPerConfirmed: number; perSecond: number }[]])) as Record<Mode, { cpuPerConfirmed: number; perSecond: number }[]>;
    await load.throughput(LOAD_AGENTS, LOAD_INFLIGHT, 3); // warm-up: the agents' wallets deployed
    for (let round = 0; round < ROUNDS; round++) {
      for (const [mode, s] of Object.entries(modes) as [Mode, TracingSettings | undefined][]) {
        await stopTracing();
        if (s) await startTracing(s);
        const receiverCpu0 = receiver.cpuMs;
        const r = await load.throughput(LOAD_AGENTS, LOAD_INFLIGHT, LOAD_SECONDS);
        await flushTracing(); // the export of what this window traced belongs to its cost
        const cpu = r.cpuMs - (receiver.cpuMs - receiverCpu0);
        cost[mode].push({ cpuPerConfirmed: cpu / r.confirmed, perSecond: r.confirmed / r.elapsedSeconds });
      }
    }
    const med = (xs: number[]) => pct(xs, 50);
    const cpuOf = (m: Mode) => med(cost[m].map((x) => x.cpuPerConfirmed));
    const vsOff = (m: Mode) => `${cpuOf(m).toFixed(2)} ms (${cpuOf(m) >= cpuOf('off') ? '+' : ''}${(((cpuOf(m) / cpuOf('off')) - 1) * 100).toFixed(0)} %)`;
    const rounds = (m: Mode) => cost[m].map((x) => `${x.cpuPerConfirmed.toFixed(2)} ms ${x.perSecond.toFixed(0)}/s`).join(', ');
    console.log(
      `\nembedded, the cost of tracing under load (${LOAD_AGENTS} agents × ${LOAD_INFLIGHT} in flight over the three chains, ${LOAD_SECONDS} s windows, ${ROUNDS} rounds interleaved; this process's CPU less the receiver's decoding, median of the rounds):` +
        `\n  CPU per confirmed request: off ${cpuOf('off').toFixed(2)} ms, on sampling none ${vsOff('unsampled')}, on ${vsOff('on')}` +
        `\n  rounds: off ${rounds('off')}; unsampled ${rounds('unsampled')}; on ${rounds('on')}`,
    );
    load.close();
  } finally {
    await service.stop();
    await stopTracing();
    await devnet.stop();
    await receiver.close();
    rmSync(dataDir, { recursive: true, force: true });
  }
}

/** Sum of process_cpu_seconds_total over the cluster's role processes, in ms. */
async function clusterCpuMs(processes: readonly { opsPort: number }[]): Promise<number> {
  let total = 0;
  for (const p of processes) {
    const text = await fetch(`http://127.0.0.1:${p.opsPort}/metrics`).then((r) => r.text(), () => '');
    total += Number(/^process_cpu_seconds_total (\S+)$/m.exec(text)?.[1] ?? 0) * 1000;
  }
  return total;
}

/** One cluster (every role a process, a real kube-apiserver), tracing on or off by the roles' environment. */
async function benchClusterOnce(receiver: OtlpReceiver, on: boolean): Promise<{ cpuPerRequest: number; perSecond: number; latencies: number[]; traces: Trace[] }> {
  if (on) process.env.OTEL_EXPORTER_OTLP_ENDPOINT = receiver.endpoint;
  else delete process.env.OTEL_EXPORTER_OTLP_ENDPOINT;
  let result = { cpuPerRequest: 0, perSecond: 0, latencies: [] as number[], traces: [] as Trace[] };
  try {
    await withBenchCluster('traces', async ({ cluster }) => {
      const { apiKey } = await cluster.newKey();
      const counterOf = (chain: ChainName) => cluster.devnet.chain(chain).testContracts.counter;
      let load = loadGenerator({ url: cluster.url, apiKey, store: cluster.store, namespace: cluster.namespace, counterOf });
      await load.latency(10);
      const live = cluster.processes.filter((p) => p.child.exitCode === null);
      const since = epochMs();
      const latencies = await load.latency(N);
      const traces = on ? await awaitTraces(receiver, since, N) : [];
      load.close();
      // CPU per confirmed request under load, summed over the role processes (their /metrics). A new generator:
      // the keep-alive sockets idle while the traces arrived may be closed by the gateway as they are reused.
      load = loadGenerator({ url: cluster.url, apiKey, store: cluster.store, namespace: cluster.namespace, counterOf });
      await load.throughput(LOAD_AGENTS, LOAD_INFLIGHT, 3); // warm-up: the agents' wallets deployed
      const cpu0 = await clusterCpuMs(live);
      const r = await load.throughput(LOAD_AGENTS, LOAD_INFLIGHT, LOAD_SECONDS);
      const cpu = (await clusterCpuMs(live)) - cpu0;
      for (const [why, n] of r.otherReasons) console.log(`  (tracing ${on ? 'on' : 'off'}) not confirmed ×${n}: ${why}`);
      result = { cpuPerRequest: cpu / r.confirmed, perSecond: r.confirmed / r.elapsedSeconds, latencies, traces };
      load.close();
    });
  } finally {
    delete process.env.OTEL_EXPORTER_OTLP_ENDPOINT;
  }
  return result;
}

async function benchCluster(): Promise<void> {
  const receiver = await startOtlpReceiver();
  const rounds = Number(process.env.BENCH_TRACES_CLUSTER_ROUNDS ?? 2);
  const runs = { off: [] as Awaited<ReturnType<typeof benchClusterOnce>>[], on: [] as Awaited<ReturnType<typeof benchClusterOnce>>[] };
  try {
    // Fresh clusters, off and on alternating (on first in even rounds): the machine's drift falls on both.
    for (let round = 0; round < rounds; round++) {
      for (const on of round % 2 === 0 ? [true, false] : [false, true]) runs[on ? 'on' : 'off'].push(await benchClusterOnce(receiver, on));
    }
    const traces = runs.on.flatMap((r) => r.traces);
    printBreakdown(`cluster (gateway, 2 controllers, 3 chain workers, kube-apiserver), ${rounds} × ${N} sequential sponsored executes`, traces, 'service');
    console.log(`  services in the traces: ${[...new Set(traces.flatMap((t) => t.spans.map((s) => s.service)))].sort().join(', ')}`);
    const cpu = (m: 'off' | 'on') => runs[m].reduce((a, r) => a + r.cpuPerRequest, 0) / runs[m].length;
    const lat = (m: 'off' | 'on') => runs[m].flatMap((r) => r.latencies);
    console.log(
      `\ncluster, tracing off vs on (${rounds} fresh clusters each; CPU summed over the role processes under load: ${LOAD_AGENTS} agents × ${LOAD_INFLIGHT} in flight, ${LOAD_SECONDS} s):` +
        `\n  CPU per confirmed request: off ${cpu('off').toFixed(2)} ms, on ${cpu('on').toFixed(2)} ms (${cpu('on') >= cpu('off') ? '+' : ''}${(((cpu('on') / cpu('off')) - 1) * 100).toFixed(0)} %)` +
        `  [per cluster: off ${runs.off.map((r) => `${r.cpuPerRequest.toFixed(2)} ms ${r.perSecond.toFixed(0)}/s`).join(', ')}; on ${runs.on.map((r) => `${r.cpuPerRequest.toFixed(2)} ms ${r.perSecond.toFixed(0)}/s`).join(', ')}]` +
        `\n  execute → confirmed p50: off ${pct(lat('off'), 50).toFixed(2)} ms, on ${pct(lat('on'), 50).toFixed(2)} ms; p95 off ${pct(lat('off'), 95).toFixed(2)} ms, on ${pct(lat('on'), 95).toFixed(2)} ms` +
        `  [p50 per cluster: off ${runs.off.map((r) => pct(r.latencies, 50).toFixed(1)).join(', ')}; on ${runs.on.map((r) => pct(r.latencies, 50).toFixed(1)).join(', ')}]`,
    );
  } finally {
    await receiver.close();
  }
}

if (MODE === 'embedded' || MODE === 'both') await benchEmbedded();
if (MODE === 'cluster' || MODE === 'both') await benchCluster();
