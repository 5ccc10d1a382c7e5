/**
 * What reopening the embedded store costs in memory:
 * `node bin/run-ts.js src/store/embedded/testing/replayMemory.ts [requests] [dir]`.
 *
 * Writes `requests` requests as the service does (a create and three status writes each, `requestLifecycle`,
 * none deleted: a retention longer than the run), fsync off, compaction as configured by default; closes the
 * store; then opens it in a fresh process (node --expose-gc) and prints that process's RSS and heap before the
 * open, right after it, after a full GC, and its peak RSS (VmHWM), beside what the writing process
 * held after a GC. Asserts nothing.
 */
import { fork } from 'node:child_process';
import { readFileSync } from 'node:fs';
import { mkdtemp, readdir, rm, stat } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { openEmbeddedStore } from '../index.ts';
import { requestLifecycle } from './fixtures.ts';

const IN_FLIGHT = 64;
const mib = (n: number) => `${(n / 2 ** 20).toFixed(1)} MiB`;
const gc = (globalThis as { gc?: () => void }).gc;

/**
 * This process's peak RSS: VmHWM, of its own address space. (getrusage's maxrss would not do: it keeps the
 * peak of the parent's, which it had when forked, across the exec.)
 */
function peakRss(): number {
  const kib = /^VmHWM:\s+(\d+) kB$/m.exec(readFileSync('/proc/self/status', 'utf8'))?.[1];
  return kib === undefined ? NaN : Number(kib) * 1024;
}

interface Figures {
  rss: number;
  heapUsed: number;
  maxRss: number;
}

function figures(collect: boolean): Figures {
  if (collect) gc?.();
  const m = process.memoryUsage();
  return { rss: m.rss, heapUsed: m.heapUsed, maxRss: peakRss() };
}

const show = (f: Figures) => `rss ${mib(f.rss)}, heap used ${mib(f.heapUsed)}, peak rss ${mib(f.maxRss)}`;

async function files(dir: string): Promise<string> {
  const out: string[] = [];
  for (const name of (await readdir(dir)).sort()) {
    if (name.startsWith('wal-') || name.startsWith('snapshot')) out.push(`${name.replace(/^wal-0+/, 'wal-')} ${mib((await stat(join(dir, name))).size)}`);
  }
  return out.join(', ');
}

async function write(dir: string, requests: number): Promise<void> {
  const store = await openEmbeddedStore({ dir, fsync: false });
  let next = 0;
  await Promise.all(
    Array.from({ length: IN_FLIGHT }, async () => {
      for (let i = next++; i < requests; i = next++) {
        const { created, statuses } = requestLifecycle(i);
        let current = await store.create(created);
        for (const status of statuses) current = await store.updateStatus({ ...current, status });
      }
    }),
  );
  console.log(`  writer, ${requests} requests written, after a GC: ${show(figures(true))}; ${store.stats().objects} objects`);
  await store.close();
}

async function reopen(dir: string): Promise<void> {
  const before = figures(true);
  const t0 = performance.now();
  const store = await openEmbeddedStore({ dir, compactIntervalMs: 0 });
  const ms = performance.now() - t0;
  const opened = figures(false);
  console.log(`  reopen: before ${show(before)}`);
  console.log(`          opened in ${ms.toFixed(0)} ms: ${show(opened)}; ${store.stats().objects} objects`);
  console.log(`          after a GC: ${show(figures(true))}`);
  await store.close();
}

if (process.env.REPLAY_CHILD) {
  await reopen(process.env.REPLAY_CHILD);
} else {
  const requests = Number(process.argv[2] ?? 10_000);
  const dir = await mkdtemp(join(process.argv[3] ?? tmpdir(), 'replay-'));
  try {
    await write(dir, requests);
    console.log(`  files: ${await files(dir)}`);
    await new Promise<void>((resolve, reject) => {
      const p = fork(join(import.meta.dirname, '../../../../bin/run-ts.js'), [import.meta.filename], {
        execArgv: ['--expose-gc'],
        env: { ...process.env, REPLAY_CHILD: dir },
      });
      p.on('exit', (code) => (code === 0 ? resolve() : reject(new Error(`reopen exited with ${code}`))));
    });
  } finally {
    await rm(dir, { recursive: true, force: true });
  }
}
