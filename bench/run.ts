/**
 * `npm run bench`: figures, not assertions. Starts its own devnet and the embedded service in a temp dir and
 * prints: execute → confirmed latency (one agent, sequential), sustained confirmed executions per second
 * (50 agents over three chains), and gas per operation in bundles. Targets and their discussion live in
 * docs/benchmarks.md. Options: BENCH_LATENCY_N (default 200), BENCH_SECONDS (default 20), BENCH_AGENTS (50),
 * BENCH_INFLIGHT per agent (default 8).
 */
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { randomBytes } from 'node:crypto';
import { Agent, request } from 'node:http';
import { encodeFunctionData } from 'viem';
import { CHAIN_NAMES, type ChainName } from '../src/config/chains.ts';
import { counterAbi } from '../src/devnet/contracts.ts';
import { startDevnet } from '../src/devnet/devnet.ts';
import { createKey } from '../src/keys/manage.ts';
import { startEmbeddedService } from '../src/roles/embedded.ts';
import { isTerminal, type ExecutionRequest } from '../src/api/v1alpha1/index.ts';
import { bundlesSince } from '../src/chain/index.ts';

const LATENCY_N = Number(process.env.BENCH_LATENCY_N ?? 200);
const SECONDS = Number(process.env.BENCH_SECONDS ?? 20);
const AGENTS = Number(process.env.BENCH_AGENTS ?? 50);
const INFLIGHT = Number(process.env.BENCH_INFLIGHT ?? 8);

const dataDir = mkdtempSync(join(tmpdir(), 'aw-bench-'));
const devnet = await startDevnet({ dataDir, log: () => undefined });
const service = await startEmbeddedService({
  dataDir,
  chains: devnet.chainConfigs().map((c) => ({
    ...c,
    ...(process.env.BENCH_EXECUTORS && { executorKeys: c.executorKeys.slice(0, Number(process.env.BENCH_EXECUTORS)) }),
    bundler: {
      ...c.bundler,
      ...(process.env.BENCH_MAX_WAIT_MS && { maxWaitMs: Number(process.env.BENCH_MAX_WAIT_MS) }),
      ...(process.env.BENCH_MAX_BUSY_WAIT_MS && { maxBusyWaitMs: Number(process.env.BENCH_MAX_BUSY_WAIT_MS) }),
    },
  })),
  serviceSecret: randomBytes(32).toString('hex'),
  port: 0,
});
const { api_key } = await createKey(service.store, { mode: 'sponsored', requestsPerSecond: 100_000, burst: 100_000 });
const increment = encodeFunctionData({ abi: counterAbi, functionName: 'increment' });
const counterOf = (chain: ChainName) => devnet.manifest.chains.find((c) => c.name === chain)!.testContracts.counter;

// Terminal phases are observed through a store watch, so the figure is the service's, not a polling interval's.
const waiting = new Map<string, (r: ExecutionRequest) => void>();
const watch = service.store.watch('ExecutionRequest', {}, (e) => {
  if (isTerminal(e.object.status?.phase)) waiting.get(e.object.metadata.name)?.(e.object);
});

// The load generator shares the process and its two cores with the service: keep it cheap (keep-alive node:http).
const httpAgent = new Agent({ keepAlive: true, maxSockets: 512 });
function post(path: string, payload: unknown): Promise<{ status: number; body: any }> {
  const text = JSON.stringify(payload);
  return new Promise((resolve, reject) => {
    const req = request(
      `${service.url}${path}`,
      {
        method: 'POST',
        agent: httpAgent,
        headers: { 'content-type': 'application/json', 'content-length': Buffer.byteLength(text), 'x-api-key': api_key },
      },
      (res) => {
        let data = '';
        res.setEncoding('utf8');
        res.on('data', (c: string) => (data += c));
        res.on('end', () => resolve({ status: res.statusCode ?? 0, body: JSON.parse(data) }));
      },
    );
    req.on('error', reject);
    req.end(text);
  });
}

async function execute(agent: string, chain: ChainName): Promise<{ id: string; done: Promise<ExecutionRequest> }> {
  const res = await post('/execute', { agent_id: agent, chain, target_contract: counterOf(chain), calldata: increment, value: '0' });
  const body = res.body as { request_id: string; status: string };
  if (res.status !== 200) throw new Error(`execute: HTTP ${res.status} ${JSON.stringify(body)}`);
  const done = new Promise<ExecutionRequest>((resolve) => waiting.set(body.request_id, resolve));
  // It may have finished before we registered: look once.
  const now = await service.store.get('ExecutionRequest', body.request_id);
  if (isTerminal(now.status?.phase)) waiting.get(body.request_id)?.(now);
  return { id: body.request_id, done };
}

const pct = (xs: number[], p: number) => {
  const s = [...xs].sort((a, b) => a - b);
  return s[Math.min(s.length - 1, Math.floor((p / 100) * s.length))]!;
};
const fmt = (ms: number) => `${ms.toFixed(1)} ms`;

// 1. Latency, one agent, one request at a time (the first one also deploys the wallet).
await (await execute('latency-agent', 'ethereum')).done;
const latencies: number[] = [];
for (let i = 0; i < LATENCY_N; i++) {
  const t0 = performance.now();
  const { id, done } = await execute('latency-agent', 'ethereum');
  const r = await done;
  waiting.delete(id);
  if (r.status?.phase !== 'Confirmed') throw new Error(`${id} ended ${r.status?.phase}`);
  latencies.push(performance.now() - t0);
}
console.log(`execute → confirmed, one agent, ${LATENCY_N} sequential: p50 ${fmt(pct(latencies, 50))}, p99 ${fmt(pct(latencies, 99))}, max ${fmt(Math.max(...latencies))}`);

// 2. Throughput, AGENTS agents round-robin over the three chains, INFLIGHT requests outstanding each.
const statsBefore = new Map([...service.workers].map(([c, w]) => [c, structuredClone(w.bundlerStats())]));
let confirmed = 0;
let other = 0;
const otherReasons = new Map<string, number>();
const deadline = performance.now() + SECONDS * 1000;
const t0 = performance.now();
async function agentLoop(i: number): Promise<void> {
  const chain = CHAIN_NAMES[i % CHAIN_NAMES.length]!;
  const inflight = new Set<Promise<void>>();
  while (performance.now() < deadline) {
    while (inflight.size < INFLIGHT && performance.now() < deadline) {
      const p: Promise<void> = execute(`bench-agent-${i}`, chain)
        .then(({ id, done }) => done.then((r) => {
          waiting.delete(id);
          if (r.status?.phase === 'Confirmed') confirmed++;
          else {
            other++;
            const why = `${r.status?.phase}: ${r.status?.failure?.code} ${r.status?.failure?.message ?? ''}`.slice(0, 160);
            otherReasons.set(why, (otherReasons.get(why) ?? 0) + 1);
          }
        }))
        .finally(() => inflight.delete(p));
      inflight.add(p);
    }
    await Promise.race(inflight);
  }
  await Promise.all(inflight);
}
await Promise.all(Array.from({ length: AGENTS }, (_, i) => agentLoop(i)));
const elapsed = (performance.now() - t0) / 1000;
console.log(
  `sustained: ${AGENTS} agents over ${CHAIN_NAMES.length} chains, ${INFLIGHT} in flight each, ${elapsed.toFixed(1)} s: ` +
    `${confirmed} confirmed (${(confirmed / elapsed).toFixed(0)}/s), ${other} not confirmed`,
);
for (const [why, n] of otherReasons) console.log(`  not confirmed ×${n}: ${why}`);

// 3. Gas per operation, from the bundles sent during the throughput run, by bundle size. The first operation
// of each of the AGENTS wallets also deploys it (≈ +170k): those sit in the smaller, earlier bundles mostly.
const buckets = [[1, 1], [2, 4], [5, 9], [10, 19], [20, Infinity]] as const;
const byBucket = buckets.map(() => ({ bundles: 0, ops: 0, gas: 0n }));
let ops = 0;
let gas = 0n;
let bundles = 0;
for (const [chain, w] of service.workers) {
  const before = statsBefore.get(chain)!;
  const after = w.bundlerStats();
  for (const { size, bundles: n, gasUsed } of bundlesSince(after.bySize, before.bySize)) {
    const b = byBucket[buckets.findIndex(([lo, hi]) => size >= lo && size <= hi)]!;
    b.bundles += n;
    b.ops += size * n;
    b.gas += gasUsed;
    bundles += n;
    ops += size * n;
    gas += gasUsed;
  }
}
console.log(
  `bundles: ${bundles}, ${(ops / Math.max(1, bundles)).toFixed(1)} ops per bundle on average, ` +
    `${ops ? (Number(gas) / ops).toFixed(0) : '-'} gas per operation (bundle transaction gas / ops)`,
);
byBucket.forEach((b, i) => {
  const [lo, hi] = buckets[i]!;
  if (b.bundles > 0)
    console.log(`  bundles of ${hi === Infinity ? `${lo}+` : lo === hi ? lo : `${lo}-${hi}`} ops: ${b.bundles} bundles, ${(Number(b.gas) / b.ops).toFixed(0)} gas per operation`);
});
console.log(`memory: rss ${(process.memoryUsage().rss / 2 ** 20).toFixed(0)} MiB`);

watch.stop();
httpAgent.destroy();
await service.stop();
await devnet.stop();
rmSync(dataDir, { recursive: true, force: true });
