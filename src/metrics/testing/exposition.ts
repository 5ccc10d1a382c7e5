/**
 * A parser of the Prometheus text exposition format (0.0.4), for tests: they check what a scrape really
 * returns, not prom-client's objects. Strict: a line it cannot read throws, so a malformed exposition fails
 * the test that scraped it. Not used by production code.
 */
export interface Sample {
  name: string;
  labels: Record<string, string>;
  value: number;
}

export interface Exposition {
  samples: Sample[];
  /** `# TYPE` of each family. */
  types: Map<string, string>;
  /** Samples named `name` whose labels include `labels`. */
  find(name: string, labels?: Record<string, string>): Sample[];
  /** The value of the sample named `name` whose labels include `labels`; throws when several do. */
  value(name: string, labels?: Record<string, string>): number | undefined;
  /** How many distinct label sets the samples named `name` have. */
  series(name: string): number;
}

const NAME = /^[a-zA-Z_:][a-zA-Z0-9_:]*/;
const LABEL_NAME = /^[a-zA-Z_][a-zA-Z0-9_]*/;

export function parseExposition(text: string): Exposition {
  const samples: Sample[] = [];
  const types = new Map<string, string>();
  for (const [i, line] of text.split('\n').entries()) {
    if (line === '') continue;
    if (line.startsWith('#')) {
      const m = /^# (HELP|TYPE) ([a-zA-Z_:][a-zA-Z0-9_:]*) ?(.*)$/.exec(line);
      if (!m) throw new Error(`line ${i + 1}: bad comment: ${line}`);
      if (m[1] === 'TYPE') types.set(m[2]!, m[3]!);
      continue;
    }
    samples.push(parseSample(line, i + 1));
  }
  const matches = (s: Sample, labels: Record<string, string>) => Object.entries(labels).every(([k, v]) => s.labels[k] === v);
  const find = (name: string, labels: Record<string, string> = {}) => samples.filter((s) => s.name === name && matches(s, labels));
  return {
    samples,
    types,
    find,
    value(name, labels = {}) {
      const found = find(name, labels);
      if (found.length > 1) throw new Error(`${name} ${JSON.stringify(labels)} matches ${found.length} samples`);
      return found[0]?.value;
    },
    series: (name) => new Set(find(name).map((s) => JSON.stringify(Object.entries(s.labels).sort()))).size,
  };
}

function parseSample(line: string, n: number): Sample {
  const name = NAME.exec(line)?.[0];
  if (!name) throw new Error(`line ${n}: no metric name: ${line}`);
  let rest = line.slice(name.length);
  const labels: Record<string, string> = {};
  if (rest.startsWith('{')) {
    rest = rest.slice(1);
    while (!rest.startsWith('}')) {
      const label = LABEL_NAME.exec(rest)?.[0];
      if (!label || rest[label.length] !== '=' || rest[label.length + 1] !== '"') throw new Error(`line ${n}: bad label: ${line}`);
      rest = rest.slice(label.length + 2);
      let value = '';
      for (;;) {
        const c = rest[0];
        if (c === undefined) throw new Error(`line ${n}: unterminated label value: ${line}`);
        rest = rest.slice(1);
        if (c === '"') break;
        if (c === '\\') {
          const e = rest[0];
          rest = rest.slice(1);
          value += e === 'n' ? '\n' : e === '\\' ? '\\' : e === '"' ? '"' : `\\${e}`;
        } else value += c;
      }
      if (label in labels) throw new Error(`line ${n}: label ${label} twice: ${line}`);
      labels[label] = value;
      if (rest.startsWith(',')) rest = rest.slice(1);
      else if (!rest.startsWith('}')) throw new Error(`line ${n}: expected , or }: ${line}`);
    }
    rest = rest.slice(1);
  }
  const m = /^ (\S+)( -?\d+)?$/.exec(rest);
  if (!m) throw new Error(`line ${n}: bad value: ${line}`);
  // Prometheus reads values with Go's ParseFloat: NaN and Inf in any case (prom-client writes `Nan`).
  const raw = m[1]!;
  const special = /^([+-]?)(inf|infinity|nan)$/i.exec(raw);
  const value = special ? (special[2]!.toLowerCase() === 'nan' ? NaN : special[1] === '-' ? -Infinity : Infinity) : Number(raw);
  if (Number.isNaN(value) && !special) throw new Error(`line ${n}: bad value ${raw}`);
  return { name, labels, value };
}
