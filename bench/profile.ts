/**
 * Where the CPU goes, from a V8 CPU profile (`.cpuprofile`: `node --cpu-prof`, or BENCH_CPU_PROFILE=<file> on
 * `npm run bench`, which profiles only the sustained-load window). Prints self time by package (node_modules
 * package, or the src/ folder for our own code, or V8's own buckets: GC, idle, program) and the functions
 * that take the most.
 *
 *   node bin/run-ts.js bench/profile.ts <file.cpuprofile> [top=25] [callers-of=<regex>]
 *
 * With `callers-of`, also the time spent inside functions whose name matches (e.g. `keccak_256|keccak256`),
 * attributed to the call chain that led there (the three frames above the outermost match).
 */
import { readFileSync } from 'node:fs';
import { inspect } from 'node:util';

interface ProfileNode {
  id: number;
  callFrame: { functionName: string; url: string; lineNumber: number };
  children?: number[];
}
interface Profile {
  nodes: ProfileNode[];
  samples: number[];
  timeDeltas: number[];
}

/** The package a script belongs to: node_modules/<pkg> (scoped too), src/<folder>, node:<builtin>, or V8's bucket. */
export function packageOf(frame: ProfileNode['callFrame']): string {
  const { url, functionName } = frame;
  if (!url) return `(${functionName.replace(/[()]/g, '') || 'native'})`;
  const nm = /node_modules\/((?:@[^/]+\/)?[^/]+)\//.exec(url);
  if (nm) return nm[1]!;
  const src = /\/(src|bench|test)\/([^/]+)/.exec(url);
  if (src) return `${src[1]}/${src[2]!.replace(/\.ts$/, '')}`;
  if (url.startsWith('node:')) return 'node (built-ins)';
  return url;
}

export function summarize(profile: Profile): { totalMs: number; byPackage: [string, number][]; byFunction: [string, number][] } {
  const nodes = new Map(profile.nodes.map((n) => [n.id, n]));
  const self = new Map<number, number>();
  profile.samples.forEach((id, i) => self.set(id, (self.get(id) ?? 0) + (profile.timeDeltas[i] ?? 0)));
  const byPackage = new Map<string, number>();
  const byFunction = new Map<string, number>();
  let total = 0;
  for (const [id, us] of self) {
    const f = nodes.get(id)!.callFrame;
    total += us;
    const pkg = packageOf(f);
    byPackage.set(pkg, (byPackage.get(pkg) ?? 0) + us);
    const file = f.url.replace(/^.*\/(node_modules|src|bench)\//, '$1/');
    const fn = `${f.functionName || '(anonymous)'} ${file ? `${file}:${f.lineNumber + 1}` : ''}`.trim();
    byFunction.set(fn, (byFunction.get(fn) ?? 0) + us);
  }
  const sorted = (m: Map<string, number>) => [...m].sort((a, b) => b[1] - a[1]).map(([k, v]) => [k, v / 1000] as [string, number]);
  return { totalMs: total / 1000, byPackage: sorted(byPackage), byFunction: sorted(byFunction) };
}

/** Time inside frames matching `pattern` (inclusive), by the three frames that called the outermost match. */
export function callersOf(profile: Profile, pattern: RegExp): { totalMs: number; byCaller: [string, number][] } {
  const parent = new Map<number, number>();
  for (const n of profile.nodes) for (const c of n.children ?? []) parent.set(c, n.id);
  const nodes = new Map(profile.nodes.map((n) => [n.id, n]));
  const label = (id: number) => {
    const f = nodes.get(id)!.callFrame;
    return `${f.functionName || '(anonymous)'} (${packageOf(f)})`;
  };
  const byCaller = new Map<string, number>();
  let total = 0;
  profile.samples.forEach((leaf, i) => {
    let outermost: number | undefined;
    for (let id: number | undefined = leaf; id !== undefined; id = parent.get(id)) {
      if (pattern.test(nodes.get(id)!.callFrame.functionName)) outermost = id;
    }
    if (outermost === undefined) return;
    const chain: string[] = [];
    for (let id = parent.get(outermost); id !== undefined && chain.length < 3; id = parent.get(id)) chain.push(label(id));
    const key = chain.join(' ← ');
    const us = profile.timeDeltas[i] ?? 0;
    total += us;
    byCaller.set(key, (byCaller.get(key) ?? 0) + us);
  });
  return { totalMs: total / 1000, byCaller: [...byCaller].sort((a, b) => b[1] - a[1]).map(([k, v]) => [k, v / 1000]) };
}

if (import.meta.url === `file://${process.argv[1]}`) {
  const [file, topArg, callersArg] = process.argv.slice(2);
  if (!file) {
    console.error('usage: bench/profile.ts <file.cpuprofile> [top]');
    process.exit(2);
  }
  const top = Number(topArg ?? 25);
  const s = summarize(JSON.parse(readFileSync(file, 'utf8')) as Profile);
  const busy = s.totalMs - (s.byPackage.find(([k]) => k === '(idle)')?.[1] ?? 0);
  const pct = (ms: number) => `${((100 * ms) / busy).toFixed(1).padStart(5)} %`;
  console.log(`${file}: ${(s.totalMs / 1000).toFixed(1)} s sampled, ${(busy / 1000).toFixed(1)} s busy (percentages of busy time)`);
  console.log('\nself time by package');
  for (const [k, ms] of s.byPackage.filter(([k]) => k !== '(idle)').slice(0, top)) console.log(`  ${pct(ms)}  ${k}`);
  console.log('\nself time by function');
  for (const [k, ms] of s.byFunction.filter(([k]) => !k.startsWith('(idle)')).slice(0, top)) console.log(`  ${pct(ms)}  ${inspect(k).slice(1, -1)}`);
  const pattern = callersArg?.replace(/^callers-of=/, '');
  if (pattern) {
    const c = callersOf(JSON.parse(readFileSync(file, 'utf8')) as Profile, new RegExp(pattern));
    console.log(`\ninside /${pattern}/: ${pct(c.totalMs)} of busy time, by caller`);
    for (const [k, ms] of c.byCaller.slice(0, top)) console.log(`  ${pct(ms)}  ${k}`);
  }
}
