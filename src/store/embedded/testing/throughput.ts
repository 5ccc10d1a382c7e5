/**
 * Write throughput of the embedded store: `node bin/run-ts.js src/store/embedded/testing/throughput.ts [dir]`.
 * Each scenario runs `total` writes with `inFlight` writers issuing back to back (closed loop), so the
 * batch size is what group commit makes of that concurrency, not something the benchmark forces.
 */
import { mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { openEmbeddedStore, type EmbeddedStore } from '../index.ts';
import { executionRequest } from './fixtures.ts';

interface Scenario {
  name: string;
  inFlight: number;
  total: number;
  fsync: boolean;
  op: 'create' | 'updateStatus';
}

const scenarios: Scenario[] = [
  { name: 'create, 1 in flight', inFlight: 1, total: 2_000, fsync: true, op: 'create' },
  { name: 'create, 16 in flight', inFlight: 16, total: 20_000, fsync: true, op: 'create' },
  { name: 'create, 64 in flight', inFlight: 64, total: 50_000, fsync: true, op: 'create' },
  { name: 'create, 256 in flight', inFlight: 256, total: 100_000, fsync: true, op: 'create' },
  { name: 'updateStatus, 256 in flight', inFlight: 256, total: 100_000, fsync: true, op: 'updateStatus' },
  { name: 'create, 256 in flight, fsync off', inFlight: 256, total: 100_000, fsync: false, op: 'create' },
];

async function run(base: string, s: Scenario, quiet = false): Promise<void> {
  const dir = await mkdtemp(join(base, 'bench-'));
  const store: EmbeddedStore = await openEmbeddedStore({ dir, fsync: s.fsync });
  const names = Array.from({ length: s.inFlight }, (_, i) => `er-${i}`);
  if (s.op === 'updateStatus') await Promise.all(names.map((n) => store.create(executionRequest(n))));
  const before = store.stats().wal;
  let next = 0;
  const started = performance.now();
  await Promise.all(
    names.map(async (slot) => {
      let current = s.op === 'updateStatus' ? await store.get('ExecutionRequest', slot) : undefined;
      for (let i = next++; i < s.total; i = next++) {
        if (current === undefined) {
          await store.create(executionRequest(`er-${i}-${s.inFlight}`, { labels: { 'agentwallet.dev/chain': 'base' } }));
        } else {
          current = await store.updateStatus({ ...current, status: { phase: 'Queued', submitAttempts: i } });
        }
      }
    }),
  );
  const seconds = (performance.now() - started) / 1000;
  const after = store.stats().wal;
  const batches = after.batches - before.batches;
  const records = after.records - before.records;
  if (!quiet) console.log(
    `${s.name.padEnd(34)} ${String(Math.round(s.total / seconds)).padStart(7)} writes/s` +
      `  mean batch ${(records / batches).toFixed(1).padStart(6)}  fdatasyncs ${after.syncs - before.syncs}` +
      `  ${((after.bytes - before.bytes) / records).toFixed(0)} B/record`,
  );
  await store.close();
  await rm(dir, { recursive: true, force: true });
}

const base = process.argv[2] ?? tmpdir();
console.log(`node ${process.version}, store under ${base}`);
/** Open (replay) time from a log alone, compaction time, and open time from the snapshot. */
async function recovery(base: string, objects: number): Promise<void> {
  const dir = await mkdtemp(join(base, 'bench-'));
  let store = await openEmbeddedStore({ dir, compactIntervalMs: 0, compactFloorBytes: Number.MAX_SAFE_INTEGER });
  for (let i = 0; i < objects; i += 500) {
    await Promise.all(Array.from({ length: 500 }, (_, j) => store.create(executionRequest(`er-${i + j}`))));
  }
  const logBytes = store.stats().wal.bytes;
  await store.close();
  let t = performance.now();
  store = await openEmbeddedStore({ dir, compactIntervalMs: 0, compactFloorBytes: Number.MAX_SAFE_INTEGER });
  const replayMs = performance.now() - t;
  t = performance.now();
  await store.compact();
  const compactMs = performance.now() - t;
  await store.close();
  t = performance.now();
  store = await openEmbeddedStore({ dir });
  const snapshotOpenMs = performance.now() - t;
  await store.close();
  console.log(
    `${objects} objects: open replaying a ${(logBytes / 2 ** 20).toFixed(0)} MiB log ${replayMs.toFixed(0)} ms,` +
      ` compact ${compactMs.toFixed(0)} ms, open from snapshot ${snapshotOpenMs.toFixed(0)} ms`,
  );
  await rm(dir, { recursive: true, force: true });
}

// Warm-up (JIT, zod's compiled parsers), not reported.
await run(base, { name: 'warm-up', inFlight: 16, total: 5_000, fsync: true, op: 'create' }, true);
for (const s of scenarios) await run(base, s);
await recovery(base, 100_000);
