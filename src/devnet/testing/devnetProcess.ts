/** Test helper: runs a devnet in a child process (devnetChild.ts) and waits until it is ready. */
import { spawn, type ChildProcess } from 'node:child_process';
import { resolve } from 'node:path';

const repoRoot = resolve(import.meta.dirname, '../../..');

export interface DevnetChildProcess {
  child: ChildProcess;
  /** Resolves when the child exits, with its exit code (null after a signal). */
  exited: Promise<number | null>;
  /** Everything the child printed so far (stdout and stderr). */
  output(): string;
}

export interface SpawnDevnetChildOptions {
  /**
   * Its own process group: `process.kill(-pid, 'SIGKILL')` then takes the child and its anvils down at the
   * same instant, as a crash of the whole service would.
   */
  detached?: boolean;
  /** Runs the child under this umask (through `sh -c`: a vitest worker cannot call process.umask). */
  umask?: string;
  /** The devnet's log lines go to the child's stderr, hence into `output()`. */
  log?: boolean;
}

/**
 * Starts `devnetChild.ts <dataDir> <mode>` and resolves once it printed "ready"; rejects with the child's output
 * if it exits before (or, in `wait` mode, at all).
 */
export async function spawnDevnetChild(dataDir: string, mode: 'exit' | 'wait', opts: SpawnDevnetChildOptions = {}): Promise<DevnetChildProcess> {
  const args = ['bin/run-ts.js', 'src/devnet/testing/devnetChild.ts', dataDir, mode, ...(opts.log ? ['log'] : [])];
  const child =
    opts.umask === undefined
      ? spawn(process.execPath, args, { cwd: repoRoot, stdio: ['ignore', 'pipe', 'pipe'], detached: opts.detached ?? false })
      : spawn('sh', ['-c', `umask ${opts.umask} && exec "$0" "$@"`, process.execPath, ...args], {
          cwd: repoRoot,
          stdio: ['ignore', 'pipe', 'pipe'],
          detached: opts.detached ?? false,
        });
  let output = '';
  const exited = new Promise<number | null>((r) => child.once('exit', (code) => r(code)));
  await new Promise<void>((ready, fail) => {
    child.stdout!.on('data', (chunk: Buffer) => {
      output += chunk.toString();
      if (output.includes('ready')) ready();
    });
    child.stderr!.on('data', (chunk: Buffer) => (output += chunk.toString()));
    child.once('exit', (code) => (mode === 'wait' || !output.includes('ready') ? fail(new Error(`devnet child exited ${code}: ${output}`)) : undefined));
  });
  return { child, exited, output: () => output };
}
