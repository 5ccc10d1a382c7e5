/**
 * The fenced code blocks of the docs, and what the docs test does with each (test/docs/docsBlocks.test.ts).
 *
 * A block is run unless the comment on the line before it (other HTML comments may sit between) says otherwise:
 * - `<!-- docs-test: skip <reason> -->`: not run; the reason says why it cannot run here (npm install, a real
 *   cluster or network), or `not yet: …` for what should run and does not yet.
 * - `<!-- docs-test: output -->`: what the block before it prints; its key fields are checked against that run.
 * - `<!-- docs-test: checked-by <file> -->`: checked by another test, named (it must exist and name this page).
 * - `<!-- docs-test: exit <n> -->`: run, and it is meant to end with exit status n (a refusal shown on purpose).
 * - `<!-- docs-test: save <file> -->`: saved as that file in the page's working directory, as the page asks a
 *   reader to (a program a later block runs).
 * - `<!-- docs-test: npm-start -->`: the block is `npm start [-- <flags>]`: the page's service is started again
 *   on its data directory as that command starts it (its flags read as `agent-wallet dev` reads them).
 * Runnable languages: `sh`/`bash` (bash, with `agent-wallet` on PATH), `js`/`mjs` (node), `ts` (bin/run-ts.js).
 * Any other unmarked block fails the test.
 */
import { readFileSync } from 'node:fs';

export type Marker =
  | { kind: 'run'; exit: number }
  | { kind: 'skip'; reason: string }
  | { kind: 'output' }
  | { kind: 'checked-by'; file: string }
  | { kind: 'save'; file: string }
  | { kind: 'npm-start' };

export interface Block {
  page: string;
  /** 1-based line of the opening fence. */
  line: number;
  lang: string;
  body: string;
  marker: Marker;
}

const FENCE = /^(\s*)(```+|~~~+)\s*([\w+-]*)\s*$/;
const MARKER = /^\s*<!--\s*docs-test:\s*([\w-]+)\s*(.*?)\s*-->\s*$/;
const COMMENT = /^\s*<!--.*-->\s*$/;

export function parseBlocks(page: string, text: string): Block[] {
  const lines = text.split('\n');
  const blocks: Block[] = [];
  for (let i = 0; i < lines.length; i++) {
    const open = FENCE.exec(lines[i]!);
    if (!open) continue;
    const [, indent, fence, lang] = open;
    let end = i + 1;
    while (end < lines.length && !(lines[end]!.trim().startsWith(fence!) && lines[end]!.trim() === fence)) end++;
    const body = lines
      .slice(i + 1, end)
      .map((l) => (l.startsWith(indent!) ? l.slice(indent!.length) : l))
      .join('\n');
    blocks.push({ page, line: i + 1, lang: lang ?? '', body, marker: markerBefore(page, lines, i) });
    i = end;
  }
  return blocks;
}

function markerBefore(page: string, lines: string[], fenceIndex: number): Marker {
  for (let j = fenceIndex - 1; j >= 0 && COMMENT.test(lines[j]!); j--) {
    const m = MARKER.exec(lines[j]!);
    if (!m) continue;
    const [, kind, arg] = m;
    if (kind === 'skip') {
      if (!arg) throw new Error(`${page}:${j + 1}: docs-test: skip needs a reason`);
      return { kind: 'skip', reason: arg };
    }
    if (kind === 'output') return { kind: 'output' };
    if (kind === 'checked-by') return { kind: 'checked-by', file: arg! };
    if (kind === 'exit') return { kind: 'run', exit: Number(arg) };
    if (kind === 'save') {
      if (!/^\w[\w.-]*$/.test(arg ?? '')) throw new Error(`${page}:${j + 1}: docs-test: save needs a file name (no directory)`);
      return { kind: 'save', file: arg! };
    }
    if (kind === 'npm-start') return { kind: 'npm-start' };
    throw new Error(`${page}:${j + 1}: unknown docs-test marker ${kind}`);
  }
  return { kind: 'run', exit: 0 };
}

export function readBlocks(root: string, pages: readonly string[]): Block[] {
  return pages.flatMap((p) => parseBlocks(p, readFileSync(`${root}/${p}`, 'utf8')));
}

/** Every JSON value in a command's output: the whole of it, else each line, else each balanced {…} or […]. */
export function jsonValues(out: string): unknown[] {
  const tryParse = (s: string): unknown[] => {
    try {
      return [JSON.parse(s)];
    } catch {
      return [];
    }
  };
  const whole = tryParse(out.trim());
  if (whole.length > 0) return whole;
  const found: unknown[] = [];
  let depth = 0;
  let start = -1;
  let inString = false;
  for (let i = 0; i < out.length; i++) {
    const ch = out[i]!;
    if (inString) {
      if (ch === '\\') i++;
      else if (ch === '"') inString = false;
      continue;
    }
    if (ch === '"' && depth > 0) inString = true;
    else if (ch === '{' || ch === '[') {
      if (depth === 0) start = i;
      depth++;
    } else if ((ch === '}' || ch === ']') && depth > 0) {
      depth--;
      if (depth === 0) found.push(...tryParse(out.slice(start, i + 1)));
    }
  }
  return found;
}

/** Every leaf of a JSON value under each suffix of its path: `a.b.c`, `b.c` and `c` (arrays' indices left out). */
export function leaves(value: unknown, into = new Map<string, unknown>(), path: string[] = []): Map<string, unknown> {
  if (Array.isArray(value)) value.forEach((v) => leaves(v, into, path));
  else if (value !== null && typeof value === 'object') for (const [k, v] of Object.entries(value)) leaves(v, into, [...path, k]);
  else for (let i = 0; i < path.length; i++) into.set(path.slice(i).join('.'), value);
  return into;
}

/** All (key, scalar) pairs of a JSON value, at any depth: what a shown output's key fields are matched against. */
function pairs(value: unknown, into = new Set<string>()): Set<string> {
  if (Array.isArray(value)) value.forEach((v) => pairs(v, into));
  else if (value !== null && typeof value === 'object')
    for (const [k, v] of Object.entries(value)) {
      if (v === null || typeof v !== 'object') into.add(`${k}=${JSON.stringify(v)}`);
      else pairs(v, into);
    }
  return into;
}

/**
 * What of a shown output a run must reproduce: for JSON, each `"key": scalar` whose value is written out in full
 * (no `…`), found under that key somewhere in the run's JSON; for text, each line's pieces between the `…`s.
 * Returns what is missing.
 */
export function missingFromOutput(shown: Block, stdout: string): string[] {
  if (shown.lang === 'json') {
    const got = new Set<string>();
    for (const v of jsonValues(stdout)) pairs(v, got);
    const missing: string[] = [];
    for (const m of shown.body.matchAll(/"([\w-]+)"\s*:\s*("(?:[^"\\]|\\.)*"|-?\d+(?:\.\d+)?(?:e[+-]?\d+)?|true|false|null)/g)) {
      const [, key, raw] = m;
      if (raw!.includes('…')) continue;
      const pair = `${key}=${JSON.stringify(JSON.parse(raw!))}`;
      if (!got.has(pair)) missing.push(pair);
    }
    if (got.size === 0) missing.unshift('(no JSON in the output)');
    return missing;
  }
  const missing: string[] = [];
  for (const line of shown.body.split('\n')) {
    for (const piece of line.split('…')) {
      const words = piece.trim().split(/\s+/).filter(Boolean).join(' ');
      if (words === '') continue;
      // Columns are padded to the output's own width: compare with runs of spaces made one.
      if (!stdout.replace(/[ \t]+/g, ' ').includes(words)) missing.push(words);
    }
  }
  return missing;
}
