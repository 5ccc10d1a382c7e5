/**
 * How the embedded store's files grow under the service's write pattern:
 * `node bin/run-ts.js src/store/embedded/testing/growth.ts [requests] [retained] [dir]`.
 *
 * Each request is what the service writes for it: a create, three status writes (Queued with the signed
 * UserOperation, Broadcasting, Confirmed; see `requestLifecycle`), and later the retention controller's
 * delete. Requests run 64 at a time; once `retained` finished requests are kept, each new one finished
 * deletes the oldest (the retention window). Prints bytes logged per request, the log and snapshot sizes,
 * and how long compaction and reopening take. Asserts nothing.
 */
import { mkdtemp, readdir, rm, stat } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { openEmbeddedStore, type EmbeddedStore } from '../index.ts';
import { requestLifecycle } from './fixtures.ts';

const requests = Number(process.argv[2] ?? 10_000);
const retained = Number(process.argv[3] ?? 1_000);
const base = process.argv[4] ?? tmpdir();
const IN_FLIGHT = 64;

async function filesBytes(dir: string): Promise<{ log: number; snapshot: number }> {
  let log = 0;
  let snapshot = 0;
  for (const name of await readdir(dir)) {
    // A compaction may remove a file between the listing and the stat.
    const size = (await stat(join(dir, name)).catch(() => undefined))?.size ?? 0;
    if (name.startsWith('wal-')) log += size;
    else if (name.startsWith('snapshot')) snapshot += size;
  }
  return { log, snapshot };
}

async function drive(store: EmbeddedStore, dir: string): Promise<{ peakLog: number }> {
  const finished: { name: string; rv: string }[] = [];
  let peakLog = 0;
  let next = 0;
  await Promise.all(
    Array.from({ length: IN_FLIGHT }, async () => {
      for (let i = next++; i < requests; i = next++) {
        const { created, statuses } = requestLifecycle(i);
        let current = await store.create(created);
        for (const status of statuses) current = await store.updateStatus({ ...current, status });
        finished.push({ name: current.metadata.name, rv: current.metadata.resourceVersion! });
        if (finished.length > retained) {
          const old = finished.shift()!;
          await store.delete('ExecutionRequest', old.name, { preconditions: { resourceVersion: old.rv } });
        }
        if (i % 500 === 0) peakLog = Math.max(peakLog, (await filesBytes(dir)).log);
      }
    }),
  );
  return { peakLog: Math.max(peakLog, (await filesBytes(dir)).log) };
}

const dir = await mkdtemp(join(base, 'growth-'));
const mib = (n: number) => `${(n / 2 ** 20).toFixed(2)} MiB`;
try {
  let store = await openEmbeddedStore({ dir });
  const started = performance.now();
  const { peakLog } = await drive(store, dir);
  const seconds = (performance.now() - started) / 1000;
  const stats = store.stats();
  const files = await filesBytes(dir);
  console.log(`node ${process.version}; ${requests} requests, ${retained} kept (retention), ${IN_FLIGHT} in flight, under ${base}`);
  console.log(`  writes/s ${Math.round((stats.wal.records) / seconds)}; objects live ${stats.objects}`);
  console.log(`  bytes logged per request ${Math.round(stats.wal.bytes / requests)} (${Math.round(stats.wal.bytes / stats.wal.records)} per record)`);
  const last = stats.lastCompactionMs === undefined ? '' : ` (the last took ${stats.lastCompactionMs.toFixed(0)} ms)`;
  console.log(`  log on disk ${mib(files.log)} (peak ${mib(peakLog)}), snapshot ${mib(files.snapshot)}, compactions ${stats.snapshots}${last}`);
  let t = performance.now();
  await store.compact();
  const compactMs = performance.now() - t;
  const after = await filesBytes(dir);
  await store.close();
  t = performance.now();
  store = await openEmbeddedStore({ dir });
  const openMs = performance.now() - t;
  await store.close();
  console.log(
    `  compact now: ${compactMs.toFixed(0)} ms → snapshot ${mib(after.snapshot)} (${Math.round(after.snapshot / Math.max(1, stats.objects))} B/object), log ${mib(after.log)}; reopen ${openMs.toFixed(0)} ms`,
  );
} finally {
  await rm(dir, { recursive: true, force: true });
}
