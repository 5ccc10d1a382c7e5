import { spawn, type ChildProcessWithoutNullStreams } from 'node:child_process';
import { fileURLToPath } from 'node:url';
import { createInterface } from 'node:readline';

const root = fileURLToPath(new URL('../../../../', import.meta.url));

/** A TypeScript script run as a real child process (`node bin/run-ts.js`), its stdout read line by line. */
export interface Child {
  proc: ChildProcessWithoutNullStreams;
  lines: string[];
  /** Resolves when a line satisfies the predicate (or rejects if the child exits first). */
  waitFor(pred: (line: string, all: string[]) => boolean, timeoutMs?: number): Promise<void>;
  /** Sends the signal and resolves once the child has exited and been reaped. */
  kill(signal: NodeJS.Signals): Promise<void>;
  exited: Promise<{ code: number | null; signal: NodeJS.Signals | null }>;
  stderr(): string;
}

export function spawnTs(script: string, args: string[]): Child {
  const proc = spawn(process.execPath, ['bin/run-ts.js', script, ...args], { cwd: root, stdio: 'pipe' });
  const lines: string[] = [];
  let err = '';
  proc.stderr.on('data', (d: Buffer) => (err += d.toString()));
  const watchers = new Set<() => void>();
  createInterface({ input: proc.stdout }).on('line', (line) => {
    lines.push(line);
    for (const w of watchers) w();
  });
  const exited = new Promise<{ code: number | null; signal: NodeJS.Signals | null }>((resolve) =>
    // 'close', not 'exit': every byte the child wrote to stdout has been read by then.
    proc.on('close', (code, signal) => resolve({ code, signal })),
  );
  const waitFor = (pred: (line: string, all: string[]) => boolean, timeoutMs = 30_000) =>
    new Promise<void>((resolve, reject) => {
      const check = () => {
        const last = lines.at(-1);
        if (last !== undefined && pred(last, lines)) {
          cleanup();
          resolve();
        }
      };
      const timer = setTimeout(() => {
        cleanup();
        reject(new Error(`timed out waiting on child ${script}; stderr: ${err}`));
      }, timeoutMs);
      const cleanup = () => {
        clearTimeout(timer);
        watchers.delete(check);
      };
      watchers.add(check);
      void exited.then((x) => {
        cleanup();
        reject(new Error(`child ${script} exited (${x.code ?? x.signal}) first; stderr: ${err}`));
      });
      check();
    });
  const kill = async (signal: NodeJS.Signals) => {
    proc.kill(signal);
    await exited;
  };
  return { proc, lines, waitFor, kill, exited, stderr: () => err };
}
