/**
 * The import check CI runs: the folders of src/ form layers, written in docs/architecture.md between the
 * `layers:begin` and `layers:end` markers (one line per layer, the lowest first). A folder imports only folders of
 * lower layers, and no folders import each other round a cycle. Test files, `testing/` helpers and generated code
 * are not the architecture and are not checked for that; but nothing of src/ except its tests and benches imports
 * the test tree (test/ imports src/: the two trees must not depend on each other).
 *
 *   node bin/run-ts.js scripts/check-layers.ts [root]      exit 1, with every offending import, when one is found
 */
import { readdirSync, readFileSync, statSync } from 'node:fs';
import { dirname, join, relative, resolve } from 'node:path';
import { pathToFileURL } from 'node:url';

export interface LayerReport {
  /** `from -> to` folder pairs that import against the order, each with the files that do. */
  upward: { from: string; to: string; imports: string[] }[];
  /** Folder cycles (strongly connected components of more than one folder). */
  cycles: string[][];
  /** Files of src/ (not tests or benches) that import from test/: `file -> specifier`. */
  intoTests: string[];
  /** Folders of src/ the order does not name (a new folder must be given its place). */
  unplaced: string[];
}

/** The layers docs/architecture.md writes down: folder → rank (0 = the lowest). */
export function readLayers(architectureDoc: string): Map<string, number> {
  const block = /<!-- layers:begin -->\n```[a-z]*\n([\s\S]*?)\n```\n<!-- layers:end -->/.exec(architectureDoc);
  if (!block) throw new Error('docs/architecture.md has no layers:begin / layers:end block');
  const ranks = new Map<string, number>();
  block[1]!
    .split('\n')
    .map((line) => line.replace(/#.*/, '').trim())
    .filter((line) => line !== '')
    .forEach((line, rank) => {
      for (const folder of line.split(/\s+/)) ranks.set(folder, rank);
    });
  return ranks;
}

const IMPORT = /(?:import|export)\s[^'"]*?from\s+['"](\.[^'"]+)['"]|import\(\s*['"](\.[^'"]+)['"]\s*\)/g;

function sourceFiles(src: string, opts: { testing: boolean }): string[] {
  const out: string[] = [];
  (function walk(dir: string) {
    for (const name of readdirSync(dir)) {
      const path = join(dir, name);
      if (statSync(path).isDirectory()) {
        if (name !== 'generated' && (opts.testing || name !== 'testing')) walk(path);
      } else if (name.endsWith('.ts') && !/\.(test|bench)\.ts$/.test(name)) {
        out.push(path);
      }
    }
  })(src);
  return out;
}

/** Checks the src/ of `root` against `ranks`. */
export function checkLayers(root: string, ranks: ReadonlyMap<string, number>): LayerReport {
  const src = join(resolve(root), 'src');
  const folderOf = (path: string): string | undefined => {
    const parts = relative(src, path).split('/');
    return parts.length > 1 ? parts[0] : undefined; // a file directly in src/ is no folder's
  };
  const edges = new Map<string, Map<string, string[]>>();
  const folders = new Set<string>();
  const tests = join(resolve(root), 'test') + '/';
  const intoTests: string[] = [];
  for (const file of sourceFiles(src, { testing: true })) {
    for (const m of readFileSync(file, 'utf8').matchAll(IMPORT)) {
      if (resolve(dirname(file), m[1] ?? m[2]!).startsWith(tests)) intoTests.push(`${relative(root, file)} -> ${m[1] ?? m[2]}`);
    }
  }
  for (const file of sourceFiles(src, { testing: false })) {
    const from = folderOf(file);
    if (from === undefined) continue;
    folders.add(from);
    for (const m of readFileSync(file, 'utf8').matchAll(IMPORT)) {
      const target = resolve(dirname(file), m[1] ?? m[2]!);
      if (!target.startsWith(src + '/')) continue;
      const to = folderOf(target);
      if (to === undefined || to === from) continue;
      const byTarget = edges.get(from) ?? new Map<string, string[]>();
      edges.set(from, byTarget);
      byTarget.set(to, [...(byTarget.get(to) ?? []), `${relative(root, file)} -> ${m[1] ?? m[2]}`]);
    }
  }

  const upward: LayerReport['upward'] = [];
  for (const [from, targets] of edges) {
    for (const [to, imports] of targets) {
      const a = ranks.get(from);
      const b = ranks.get(to);
      if (a !== undefined && b !== undefined && b >= a) upward.push({ from, to, imports });
    }
  }
  return {
    upward: upward.sort((x, y) => `${x.from}>${x.to}`.localeCompare(`${y.from}>${y.to}`)),
    cycles: cyclesOf(folders, edges),
    intoTests: intoTests.sort(),
    unplaced: [...folders].filter((f) => !ranks.has(f)).sort(),
  };
}

/** Tarjan's strongly connected components of more than one folder. */
function cyclesOf(folders: ReadonlySet<string>, edges: ReadonlyMap<string, ReadonlyMap<string, string[]>>): string[][] {
  let next = 0;
  const index = new Map<string, number>();
  const low = new Map<string, number>();
  const stack: string[] = [];
  const onStack = new Set<string>();
  const out: string[][] = [];
  const visit = (v: string): void => {
    index.set(v, next);
    low.set(v, next);
    next++;
    stack.push(v);
    onStack.add(v);
    for (const w of edges.get(v)?.keys() ?? []) {
      if (!index.has(w)) {
        visit(w);
        low.set(v, Math.min(low.get(v)!, low.get(w)!));
      } else if (onStack.has(w)) {
        low.set(v, Math.min(low.get(v)!, index.get(w)!));
      }
    }
    if (low.get(v) === index.get(v)) {
      const component: string[] = [];
      let w: string;
      do {
        w = stack.pop()!;
        onStack.delete(w);
        component.push(w);
      } while (w !== v);
      if (component.length > 1) out.push(component.sort());
    }
  };
  for (const v of [...folders].sort()) if (!index.has(v)) visit(v);
  return out;
}

/** The report as CI prints it; empty when all is well. */
export function describeReport(r: LayerReport): string[] {
  return [
    ...r.cycles.map((c) => `cycle: ${c.join(' <-> ')}`),
    ...r.upward.map((u) => `upward: ${u.from} -> ${u.to} (${u.imports.length}): ${u.imports.slice(0, 3).join('; ')}`),
    ...r.intoTests.map((i) => `into the test tree: ${i}`),
    ...r.unplaced.map((f) => `unplaced: src/${f} has no layer in docs/architecture.md`),
  ];
}

if (import.meta.url === pathToFileURL(process.argv[1] ?? '').href) {
  const root = resolve(process.argv[2] ?? '.');
  const report = checkLayers(root, readLayers(readFileSync(join(root, 'docs/architecture.md'), 'utf8')));
  const lines = describeReport(report);
  for (const line of lines) console.log(line);
  console.log(lines.length === 0 ? 'layers: every import points down, no cycles' : `layers: ${lines.length} problem(s)`);
  process.exit(lines.length === 0 ? 0 : 1);
}
