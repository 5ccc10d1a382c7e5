/**
 * `npm run bench`: figures, not assertions. Starts its own devnet and the embedded service in a temp dir and
 * prints: execute → confirmed latency (one agent, sequential), sustained confirmed executions per second
 * (50 agents over three chains), and gas per operation in bundles. Targets and their discussion live in
 * docs/benchmarks.md. Options: BENCH_LATENCY_N (default 200), BENCH_SECONDS (default 20), BENCH_AGENTS (50),
 * BENCH_INFLIGHT per agent (default 8), BENCH_CEILING_OPS per chain (default 1500), BENCH_WEBHOOK_N (default 50:
 * sequential executes with a callback_url, for the webhook delivery latency), BENCH_MANUAL_N (default 50: manual-mode
 * executes paid on chain, for the payment flow's latency), BENCH_PROTOCOL_N (default 30: rounds of reads (and of swaps, bench/swaps.ts),
 * simulations and supplies per protocol family, bench/protocols.ts), BENCH_CONFIRM_N (default 50: sequential
 * executes followed as execute --wait does, for the commit → shown latency, bench/confirmation.ts), BENCH_PERP_N (default 30:
 * perp-v2 market orders, open and close alternating, bench/perp.ts), BENCH_BUDGET_N (default 100: executes under a budget and
 * without, interleaved, bench/budgets.ts), BENCH_PERP_KEEPER_DELAY_MS (default 200: the
 * devnet GMX keeper's delay before it executes an order; the figures are printed net of it), BENCH_CPU_PROFILE=<file> to
 * write a V8 CPU profile of the sustained-load window (summarize it with bench/profile.ts). The same load
 * against the cluster layout: bench/cluster.ts. Last, gas per operation of warm wallets by bundle size with its breakdown
 * (bench/gas.ts, also runnable alone).
 *
 * Figures that travel between machines: the service's CPU time per confirmed request, and its throughput as a
 * fraction of the chain's own ceiling (bench/ceiling.ts), measured in the same run on the same devnet.
 */
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { Session } from 'node:inspector/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { randomBytes } from 'node:crypto';
import type { ChainName } from '../src/config/chains.ts';
import { startDevnet } from '../src/devnet/devnet.ts';
import { createKey } from '../src/keys/manage.ts';
import { startEmbeddedService } from '../src/roles/embedded.ts';
import { bundlesSince } from '../src/chain/index.ts';
import { measureChainCeiling } from './ceiling.ts';
import { measureGas, printGas } from './gas.ts';
import { measureConfirmationLatency, printConfirmationLatency } from './confirmation.ts';
import { loadGenerator, pct, printLatency, printThroughput } from './load.ts';
import { floorLine, measureChainFloors, signingFloorMs } from './floors.ts';
import { measureManualFlow, printManualFlow } from './payments.ts';
import { measureBudgetCost, printBudgetCost } from './budgets.ts';
import { measurePerp, printPerp } from './perp.ts';
import { measureProtocols, printProtocols } from './protocols.ts';
import { measureSwaps, printSwaps } from './swaps.ts';
import { measureWebhookLatency, printWebhookLatency } from './webhooks.ts';
import { startWebhookReceiver } from '../test/support/webhookReceiver.ts';

const LATENCY_N = Number(process.env.BENCH_LATENCY_N ?? 200);
const SECONDS = Number(process.env.BENCH_SECONDS ?? 20);
const AGENTS = Number(process.env.BENCH_AGENTS ?? 50);
const INFLIGHT = Number(process.env.BENCH_INFLIGHT ?? 8);
const CEILING_OPS = Number(process.env.BENCH_CEILING_OPS ?? 1500);
const WEBHOOK_N = Number(process.env.BENCH_WEBHOOK_N ?? 50);
const MANUAL_N = Number(process.env.BENCH_MANUAL_N ?? 50);
const PROTOCOL_N = Number(process.env.BENCH_PROTOCOL_N ?? 30);
const CONFIRM_N = Number(process.env.BENCH_CONFIRM_N ?? 50);
const PERP_N = Number(process.env.BENCH_PERP_N ?? 30);
const BUDGET_N = Number(process.env.BENCH_BUDGET_N ?? 100);
const PERP_KEEPER_DELAY_MS = Number(process.env.BENCH_PERP_KEEPER_DELAY_MS ?? 200);

const dataDir = mkdtempSync(join(tmpdir(), 'aw-bench-'));
// The devnet's state snapshots (anvil_dumpState, for a devnet that survives restarts) pause a chain for up to
// ~100 ms each: they would be the p99 of every figure here, the devnet's and not the service's. A bench devnet is
// thrown away, so they are rare unless BENCH_DEVNET_SNAPSHOTS=1.
const snapshots = process.env.BENCH_DEVNET_SNAPSHOTS === '1' ? {} : { snapshots: { pollMs: 3_600_000 } };
const devnet = await startDevnet({ dataDir, log: () => undefined, protocols: { gmxKeeperDelayMs: PERP_KEEPER_DELAY_MS }, ...snapshots });
const chains = devnet.chainConfigs().map((c) => ({
  ...c,
  ...(process.env.BENCH_EXECUTORS && { executorKeys: c.executorKeys.slice(0, Number(process.env.BENCH_EXECUTORS)) }),
  bundler: {
    ...c.bundler,
    ...(process.env.BENCH_MAX_WAIT_MS && { maxWaitMs: Number(process.env.BENCH_MAX_WAIT_MS) }),
    ...(process.env.BENCH_MAX_BUSY_WAIT_MS && { maxBusyWaitMs: Number(process.env.BENCH_MAX_BUSY_WAIT_MS) }),
  },
}));
// A real HTTPS receiver on this machine (self-signed, trusted by the service): loopback needs the dev setting.
const receiver = await startWebhookReceiver();
const service = await startEmbeddedService({
  dataDir,
  chains,
  serviceSecret: randomBytes(32).toString('hex'),
  port: 0,
  webhooks: { allowLoopback: true, ca: receiver.ca },
  // One load generator holds AGENTS × INFLIGHT connections from one address, as a proxy would: no per-address bound.
  connections: { maxConnectionsPerAddress: 0 },
});
const { api_key } = await createKey(service.store, { mode: 'sponsored', requestsPerSecond: 100_000, burst: 100_000 }, undefined, service.webhookSecrets);
const counterOf = (chain: ChainName) => devnet.manifest.chains.find((c) => c.name === chain)!.testContracts.counter;
const load = loadGenerator({ url: service.url, apiKey: api_key, store: service.store, counterOf });

// 1. Latency, one agent, one request at a time (the first one also deploys the wallet).
const plainLatency = await load.latency(LATENCY_N);
printLatency(plainLatency);
// Its floors, same run, same chain (bench/floors.ts): the chain's own transfer, one eth_call, one fdatasync.
const floors = await measureChainFloors(devnet.manifest.chains.find((c) => c.name === 'ethereum')!, devnet.manifest.accounts.funded[3]!.privateKey);
console.log(floorLine('a plain transfer on the same chain, sent → mined', floors.transfer));
console.log(floorLine('one simulation eth_call', floors.call));
console.log(floorLine('one durable write (a 400-byte append + fdatasync)', floors.fdatasync));
console.log(
  `  execute → confirmed / transfer: p50 ${(pct(plainLatency, 50) / pct(floors.transfer, 50)).toFixed(2)}×, p99 ${(pct(plainLatency, 99) / pct(floors.transfer, 99)).toFixed(2)}× ` +
    `(p99 against the transfer's p50: ${(pct(plainLatency, 99) / pct(floors.transfer, 50)).toFixed(2)}×)`,
);

// 1b. Webhook delivery latency (terminal state → receiver has it), beside its references from the same run.
printWebhookLatency(await measureWebhookLatency({ url: service.url, apiKey: api_key, store: service.store, counterOf, receiver }, WEBHOOK_N));

// 1b'. How soon a confirmation is shown (execute --wait's waiting GETs), beside the request's own time to it.
printConfirmationLatency(await measureConfirmationLatency({ url: service.url, apiKey: api_key, store: service.store, counterOf }, CONFIRM_N));

// 1c. The manual payment flow (402 → on-chain payment → proof → confirmed), beside the chain's own transfer time.
const manual = await createKey(service.store, { mode: 'manual', requestsPerSecond: 100_000, burst: 100_000 }, undefined, service.webhookSecrets);
printManualFlow(await measureManualFlow({ url: service.url, apiKey: manual.api_key, manifest: devnet.manifest, payerKey: devnet.manifest.accounts.funded[1]!.privateKey }, MANUAL_N));

// 1c'. What a budget adds to an execute's admission, beside the same execute under a policy without one.
printBudgetCost(await measureBudgetCost(service, counterOf, BUDGET_N));

// 1d. The protocol families: a read, a simulation with effects, an action to confirmed, each beside its core endpoint.
printProtocols(await measureProtocols({ url: service.url, apiKey: api_key, manifest: devnet.manifest, funderKey: devnet.manifest.accounts.funded[2]!.privateKey }, PROTOCOL_N));

// 1e. The exchange families: quote, simulate and swap → confirmed beside the core endpoints, and the swap's gas beside
// the same swap sent straight to the router.
const swaps = await measureSwaps({ url: service.url, apiKey: api_key, manifest: devnet.manifest, funderKey: devnet.manifest.accounts.funded[2]!.privateKey }, PROTOCOL_N);
printSwaps(swaps);

// 1f. perp-v2's orders: create → confirmed and → executed by the devnet's keeper, beside its configured delay and net
// of it, beside the plain execute → confirmed of 1; the create's gas beside the swaps' of 1e.
const perp = await measurePerp({ url: service.url, apiKey: api_key, manifest: devnet.manifest, funderKey: devnet.manifest.accounts.funded[2]!.privateKey }, PERP_N);
printPerp(perp, PERP_KEEPER_DELAY_MS, plainLatency, swaps);

// 2. Throughput, AGENTS agents round-robin over the three chains, INFLIGHT requests outstanding each.
const statsBefore = new Map([...service.workers].map(([c, w]) => [c, structuredClone(w.bundlerStats())]));
const profiler = process.env.BENCH_CPU_PROFILE ? new Session() : undefined;
if (profiler) {
  profiler.connect();
  await profiler.post('Profiler.enable');
  await profiler.post('Profiler.start');
}
const sustained = await load.throughput(AGENTS, INFLIGHT, SECONDS);
if (profiler) {
  const { profile } = await profiler.post('Profiler.stop');
  writeFileSync(process.env.BENCH_CPU_PROFILE!, JSON.stringify(profile));
  profiler.disconnect();
}
printThroughput(sustained, AGENTS, INFLIGHT);
const signingFloor = await signingFloorMs();
const cpuPerRequest = sustained.cpuMs / Math.max(1, sustained.confirmed);
console.log(
  `  CPU of the service process: ${cpuPerRequest.toFixed(2)} ms per confirmed request ` +
    `(${(sustained.cpuMs / 1000 / sustained.elapsedSeconds).toFixed(2)} cores over the window, load generator included)`,
);
console.log(
  `  reference, same run: building and signing one sponsored operation (two signatures, no RPC): ${signingFloor.toFixed(2)} ms of CPU; ` +
    `the service takes ${(cpuPerRequest / signingFloor).toFixed(1)}× that per confirmed request`,
);

// 3. Gas per operation, from the bundles sent during the throughput run, by bundle size. The first operation
// of each of the AGENTS wallets also deploys it (≈ +170k): those sit in the smaller, earlier bundles mostly.
const buckets = [[1, 1], [2, 4], [5, 9], [10, 19], [20, Infinity]] as const;
const byBucket = buckets.map(() => ({ bundles: 0, ops: 0, gas: 0n, deployments: 0, wallets: 0 }));
let ops = 0;
let gas = 0n;
let bundles = 0;
for (const [chain, w] of service.workers) {
  const before = statsBefore.get(chain)!;
  const after = w.bundlerStats();
  for (const { size, bundles: n, gasUsed, deployments, wallets } of bundlesSince(after.bySize, before.bySize)) {
    const b = byBucket[buckets.findIndex(([lo, hi]) => size >= lo && size <= hi)]!;
    b.deployments += deployments;
    b.wallets += wallets;
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
    console.log(
      `  bundles of ${hi === Infinity ? `${lo}+` : lo === hi ? lo : `${lo}-${hi}`} ops: ${b.bundles} bundles, ${(Number(b.gas) / b.ops).toFixed(0)} gas per operation ` +
        `(${b.deployments} of ${b.ops} operations deploy their wallet; ${(b.ops / Math.max(1, b.wallets)).toFixed(2)} operations per wallet in a bundle)`,
    );
});
console.log(`memory: rss ${(process.memoryUsage().rss / 2 ** 20).toFixed(0)} MiB`);

load.close();
await service.stop();
await receiver.close();

// 4. The chain's ceiling for the same operations, without the service (its executors are free now).
const ceiling = await measureChainCeiling(
  chains.map((c) => ({ config: c, counter: counterOf(c.name) })),
  {
    serviceSecret: randomBytes(32).toString('hex'),
    walletsPerChain: Math.max(1, Math.round(AGENTS / chains.length)),
    opsPerChain: CEILING_OPS,
    deployerKey: devnet.manifest.accounts.funded[0]!.privateKey,
  },
);
const serviceRate = sustained.confirmed / sustained.elapsedSeconds;
console.log(
  `chain ceiling: ${ceiling.included} of ${ceiling.sent} operations in ${ceiling.bundles} full bundles over ${chains.length} chains, ` +
    `${ceiling.seconds.toFixed(1)} s: ${ceiling.perSecond.toFixed(0)}/s (${ceiling.gasPerOp.toFixed(0)} gas per operation)`,
);
console.log(`service / ceiling: ${((100 * serviceRate) / ceiling.perSecond).toFixed(0)} % (${serviceRate.toFixed(0)}/s of ${ceiling.perSecond.toFixed(0)}/s)`);

// 5. Gas per operation of warm wallets in bundles of 1, 10, 20, 32, split by call frames, the reference paymaster
// beside the compact one, in this run (bench/gas.ts).
const gasChain = chains.find((c) => c.name === 'ethereum') ?? chains[0]!;
printGas(await measureGas({ config: gasChain, counter: counterOf(gasChain.name), deployerKey: devnet.manifest.accounts.funded[0]!.privateKey }), gasChain.name);
await devnet.stop();
rmSync(dataDir, { recursive: true, force: true });
