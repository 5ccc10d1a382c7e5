/**
 * `node bin/run-ts.js bench/memory.ts`: the embedded service's memory and store size after MEM_FIRST (default
 * 1,000) and MEM_N (default 10,000) sponsored executes confirmed, and after a restart on the same data directory.
 * Figures, not assertions.
 *
 * The devnet runs in this process; the service runs in child processes (node --expose-gc), so each one's figures
 * are its own: a `load` child starts the service, drives bench/load.ts's generator (which runs in it, as in
 * bench/run.ts) to MEM_FIRST and MEM_N confirmed and stops; a `store` child only opens the store (the log's replay
 * alone); a `restart` child starts the service again on the same directory. References from the same run: each
 * child's RSS before the service starts (node and the modules loaded), the idle service right after its first
 * start, and the store's bytes per request. Options: MEM_AGENTS (default 50), MEM_INFLIGHT (8), MEM_SETTLE_MS
 * (default 5,000: how long the restarted service runs before its second reading), MEM_RETENTION_SECONDS (the
 * service's retention of finished requests; default the service's own, 1 h), MEM_DIR (keep the data directory there;
 * a second run on it measures only the reopen and the restart), MEM_CPU_PROFILE=<dir> (profile the restart),
 * MEM_HEAP_SNAPSHOT=<file> (the load child's heap at its last reading).
 */
import { fork } from 'node:child_process';
import { randomBytes } from 'node:crypto';
import { existsSync, mkdirSync, mkdtempSync, readFileSync, readdirSync, rmSync, statSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { writeHeapSnapshot } from 'node:v8';
import { join } from 'node:path';
import type { ChainName } from '../src/config/chains.ts';
import { chainConfigsFromManifest, loadManifest, startDevnet } from '../src/devnet/devnet.ts';
import { createKey } from '../src/keys/manage.ts';
import { startEmbeddedService } from '../src/roles/embedded.ts';
import { openEmbeddedStore, type EmbeddedStore } from '../src/store/embedded/index.ts';
import { loadGenerator } from './load.ts';

const FIRST = Number(process.env.MEM_FIRST ?? 1_000);
const N = Number(process.env.MEM_N ?? 10_000);
const AGENTS = Number(process.env.MEM_AGENTS ?? 50);
const INFLIGHT = Number(process.env.MEM_INFLIGHT ?? 8);
const SETTLE_MS = Number(process.env.MEM_SETTLE_MS ?? 5_000);
const RETENTION_SECONDS = process.env.MEM_RETENTION_SECONDS ? Number(process.env.MEM_RETENTION_SECONDS) : undefined;

/** One reading: the process's memory and the store's files. */
interface Reading {
  label: string;
  requests: number;
  rss: number;
  /** The process's peak RSS so far (VmHWM). */
  maxRss: number;
  heapUsed: number;
  external: number;
  walBytes: number;
  snapshotBytes: number;
  objects?: number;
  /** The store's live objects' JSON, and its watch history's events and their JSON (EmbeddedStore.stats()). */
  objectBytes?: number;
  historyEvents?: number;
  historyBytes?: number;
  ms?: number;
}

/** What the store holds in memory, as a Reading's fields (absent from a store without these stats). */
function storeHeld(store: EmbeddedStore): Partial<Reading> {
  const s = store.stats() as Partial<ReturnType<EmbeddedStore['stats']>> & { objects: number };
  return {
    objects: s.objects,
    ...(s.objectBytes !== undefined && { objectBytes: s.objectBytes }),
    ...(s.history !== undefined && { historyEvents: s.history.events, historyBytes: s.history.bytes }),
  };
}

type Phase = 'load' | 'store' | 'restart';

function storeFiles(storeDir: string): { walBytes: number; snapshotBytes: number } {
  let walBytes = 0;
  let snapshotBytes = 0;
  if (!existsSync(storeDir)) return { walBytes, snapshotBytes };
  for (const name of readdirSync(storeDir)) {
    const size = (() => {
      try {
        return statSync(join(storeDir, name)).size;
      } catch {
        return 0; // removed by a compaction meanwhile
      }
    })();
    if (name.startsWith('wal-')) walBytes += size;
    else if (name.startsWith('snapshot')) snapshotBytes += size;
  }
  return { walBytes, snapshotBytes };
}

const gc = (globalThis as { gc?: () => void }).gc;

/**
 * This process's peak RSS: VmHWM, of its own address space. (getrusage's maxrss would not do: it keeps the
 * peak of the parent's, which it had when forked, across the exec.)
 */
function peakRss(): number {
  const kib = /^VmHWM:\s+(\d+) kB$/m.exec(readFileSync('/proc/self/status', 'utf8'))?.[1];
  return kib === undefined ? NaN : Number(kib) * 1024;
}

/** After a full GC when the process allows it: what is held, not what is garbage yet. */
function read(label: string, requests: number, storeDir: string, extra: Partial<Reading> = {}, collect = false): Reading {
  if (collect) gc?.();
  const m = process.memoryUsage();
  return { label, requests, rss: m.rss, maxRss: peakRss(), heapUsed: m.heapUsed, external: m.external, ...storeFiles(storeDir), ...extra };
}

async function child(phase: Phase): Promise<void> {
  const dataDir = process.env.MEM_DATA_DIR!;
  const storeDir = join(dataDir, 'store');
  const readings: Reading[] = [];
  const send = (r: Reading) => {
    readings.push(r);
    process.send!({ reading: r });
  };
  send(read('node and modules loaded, before the service', 0, storeDir, {}, true));
  if (phase === 'store') {
    const t0 = performance.now();
    const store = await openEmbeddedStore({ dir: storeDir, compactIntervalMs: 0 });
    const ms = performance.now() - t0;
    send(read('store opened (snapshot read, log replayed)', 0, storeDir, { ...storeHeld(store), ms }));
    send(read('store opened, after a full GC', 0, storeDir, storeHeld(store), true));
    await store.close();
    return;
  }
  const chains = chainConfigsFromManifest(loadManifest(process.env.MEM_MANIFEST!));
  const t0 = performance.now();
  const service = await startEmbeddedService({
    dataDir,
    chains,
    serviceSecret: process.env.MEM_SECRET!,
    port: 0,
    // The generator's keep-alive sockets idle between its windows: the server must not close them meanwhile.
    connections: { maxConnectionsPerAddress: 0, keepAliveTimeoutMs: 600_000 },
    ...(RETENTION_SECONDS !== undefined && { retentionSeconds: RETENTION_SECONDS }),
  });
  const ms = performance.now() - t0;
  const objects = () => storeHeld(service.store);
  if (phase === 'restart') {
    send(read('restarted: service serving (replay done)', 0, storeDir, { ...objects(), ms }));
    await new Promise((r) => setTimeout(r, SETTLE_MS));
    send(read(`restarted, ${SETTLE_MS / 1000} s later`, 0, storeDir, objects()));
    send(read(`restarted, ${SETTLE_MS / 1000} s later, after a full GC`, 0, storeDir, objects(), true));
    await service.stop();
    return;
  }
  send(read('idle service, right after its start', 0, storeDir, { ...objects(), ms }, true));
  const { api_key } = await createKey(service.store, { mode: 'sponsored', requestsPerSecond: 100_000, burst: 100_000 }, undefined, service.webhookSecrets);
  const manifest = loadManifest(process.env.MEM_MANIFEST!);
  const counterOf = (chain: ChainName) => manifest.chains.find((c) => c.name === chain)!.testContracts.counter;
  const load = loadGenerator({ url: service.url, apiKey: api_key, store: service.store, counterOf });
  let confirmed = 0;
  let other = 0;
  let rate = 200; // confirmed/s, refined after each window
  for (const target of [FIRST, N]) {
    while (confirmed < target) {
      // Short windows, sized to end near the target: the generator runs by time.
      const seconds = Math.max(0.5, Math.min(confirmed === 0 ? 1 : 5, (target - confirmed) / rate));
      const r = await load.throughput(AGENTS, INFLIGHT, seconds);
      confirmed += r.confirmed;
      other += r.other;
      rate = Math.max(10, r.confirmed / r.elapsedSeconds);
    }
    send(read(`after ${target.toLocaleString('en')} requests`, confirmed, storeDir, objects()));
    send(read(`after ${target.toLocaleString('en')} requests, after a full GC`, confirmed, storeDir, objects(), true));
  }
  if (other > 0) console.log(`  (${other} requests ended otherwise than Confirmed)`);
  // MEM_HEAP_SNAPSHOT=<file>: the heap at the last reading, to attribute what it holds (Chrome DevTools reads it).
  if (process.env.MEM_HEAP_SNAPSHOT) writeHeapSnapshot(process.env.MEM_HEAP_SNAPSHOT);
  load.close();
  await service.stop();
  send(read('service stopped (store closed)', confirmed, storeDir));
}

function runChild(phase: Phase, env: Record<string, string>): Promise<Reading[]> {
  return new Promise((resolve, reject) => {
    const readings: Reading[] = [];
    const p = fork(join(import.meta.dirname, '../bin/run-ts.js'), [import.meta.filename, phase], {
      // MEM_CPU_PROFILE=<dir>: a V8 CPU profile of the restarted service (bench/profile.ts summarizes it).
      execArgv: ['--expose-gc', ...(phase === 'restart' && process.env.MEM_CPU_PROFILE ? ['--cpu-prof', `--cpu-prof-dir=${process.env.MEM_CPU_PROFILE}`] : [])],
      env: { ...process.env, ...env, MEM_PHASE: phase },
    });
    p.on('message', (m: { reading?: Reading }) => {
      if (m.reading) {
        readings.push(m.reading);
        print(phase, m.reading);
      }
    });
    p.on('error', reject);
    p.on('exit', (code) => (code === 0 ? resolve(readings) : reject(new Error(`the ${phase} child exited with ${code}`))));
  });
}

const mib = (n: number) => `${(n / 2 ** 20).toFixed(1)} MiB`;
function print(phase: Phase, r: Reading): void {
  const parts = [
    `rss ${mib(r.rss)} (peak ${mib(r.maxRss)})`,
    `heap used ${mib(r.heapUsed)}`,
    `external ${mib(r.external)}`,
    `store files ${mib(r.walBytes + r.snapshotBytes)} (log ${mib(r.walBytes)}, snapshot ${mib(r.snapshotBytes)})`,
    ...(r.objects !== undefined ? [`${r.objects} objects`] : []),
    ...(r.objectBytes !== undefined ? [`their JSON ${mib(r.objectBytes)}`] : []),
    ...(r.historyBytes !== undefined ? [`watch history ${r.historyEvents} events, ${mib(r.historyBytes)}`] : []),
    ...(r.ms !== undefined ? [`${(r.ms / 1000).toFixed(2)} s to start`] : []),
  ];
  console.log(`  [${phase}] ${r.label}${r.requests ? ` (${r.requests} confirmed)` : ''}: ${parts.join(', ')}`);
}

async function main(): Promise<void> {
  // MEM_DIR keeps the data directory (devnet state, store, service secret) for another run, which then measures only
  // the reopen and the restart: the same files read by two versions of the code.
  const kept = process.env.MEM_DIR;
  const dataDir = kept ?? mkdtempSync(join(tmpdir(), 'aw-bench-mem-'));
  mkdirSync(dataDir, { recursive: true });
  const secretFile = join(dataDir, 'bench-secret');
  const reuse = kept !== undefined && existsSync(secretFile);
  if (!reuse) writeFileSync(secretFile, randomBytes(32).toString('hex'), { mode: 0o600 });
  const devnet = await startDevnet({ dataDir, log: () => undefined });
  try {
    const env = { MEM_DATA_DIR: dataDir, MEM_MANIFEST: devnet.manifestPath, MEM_SECRET: readFileSync(secretFile, 'utf8') };
    console.log(`memory: embedded service, ${AGENTS} agents × ${INFLIGHT} in flight, sponsored executes to confirmed; retention ${RETENTION_SECONDS ?? 3600} s`);
    if (reuse) {
      console.log(`  (reusing ${dataDir}: the reopen and the restart only)`);
      await runChild('store', env);
      await runChild('restart', env);
      return;
    }
    const load = await runChild('load', env);
    const store = await runChild('store', env);
    const restart = await runChild('restart', env);

    const at = (rs: Reading[], label: string) => rs.find((r) => r.label.startsWith(label))!;
    const idle = at(load, 'idle service');
    const first = at(load, `after ${FIRST.toLocaleString('en')} requests, after`);
    const last = at(load, `after ${N.toLocaleString('en')} requests, after`);
    const lastLive = at(load, `after ${N.toLocaleString('en')} requests`);
    const perRequest = (a: Reading, b: Reading, f: (r: Reading) => number) => (f(b) - f(a)) / Math.max(1, b.requests - a.requests);
    const files = (r: Reading) => r.walBytes + r.snapshotBytes;
    console.log('summary:');
    console.log(
      `  growth from ${first.requests} to ${last.requests} requests (after GC): rss ${(perRequest(first, last, (r) => r.rss) / 1024).toFixed(1)} KiB, ` +
        `heap used ${(perRequest(first, last, (r) => r.heapUsed) / 1024).toFixed(1)} KiB, store files ${(perRequest(first, last, files) / 1024).toFixed(1)} KiB per request`,
    );
    console.log(`  store files per request at ${last.requests}: ${(files(last) / last.requests / 1024).toFixed(1)} KiB (${last.objects} objects live)`);
    for (const r of [first, last]) {
      const held = r.heapUsed - idle.heapUsed;
      const inStore = (r.objectBytes ?? 0) + (r.historyBytes ?? 0);
      console.log(
        `  heap held at ${r.requests} (after GC, beyond the idle service's): ${mib(held)}, ${(held / r.requests / 1024).toFixed(1)} KiB per request; ` +
          (r.historyBytes === undefined
            ? 'the store does not say its share'
            : `the store's objects ${mib(r.objectBytes!)} and watch history ${mib(r.historyBytes)} (${r.historyEvents} events), ` +
              `the rest (informer caches of parsed objects, per-request maps, code) ${mib(held - inStore)}`),
      );
    }
    const replayed = at(store, 'store opened,');
    const storeBase = at(store, 'node and modules');
    console.log(
      `  the store alone, reopened: rss +${mib(at(store, 'store opened (').rss - storeBase.rss)} (+${mib(replayed.rss - storeBase.rss)} after GC), ` +
        `heap used +${mib(replayed.heapUsed - storeBase.heapUsed)} after GC, in ${(at(store, 'store opened (').ms! / 1000).toFixed(2)} s`,
    );
    const settled = at(restart, 'restarted,');
    const settledGc = restart.at(-1)!;
    console.log(
      `  restart: rss ${mib(at(restart, 'restarted: ').rss)} serving, ${mib(settled.rss)} after ${SETTLE_MS / 1000} s, ${mib(settledGc.rss)} after GC ` +
        `(before the restart: ${mib(lastLive.rss)}, ${mib(last.rss)} after GC; idle service at start ${mib(idle.rss)})`,
    );
    console.log(
      `  what bounds growth: the retention controller archives and deletes a finished request ${RETENTION_SECONDS ?? 3600} s after it ` +
        `completed (retentionSeconds; longer while a webhook is owed, an order is open, a credit or budget window holds it), so the store, ` +
        `and the informers' caches of it, hold about rate × retention requests; the store's files stay within about twice the live data + 4 MiB (compaction)`,
    );
  } finally {
    await devnet.stop();
    if (kept === undefined) rmSync(dataDir, { recursive: true, force: true });
  }
}

const phase = process.env.MEM_PHASE as Phase | undefined;
if (phase) {
  await child(phase);
  // Every reading is sent before exiting (a handle left open must not keep the child alive).
  await new Promise<void>((resolve) => process.send!({ done: true }, () => resolve()));
  process.exit(0);
} else {
  await main();
}
