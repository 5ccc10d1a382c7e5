import { spawn, type ChildProcess } from 'node:child_process';
import { createInterface } from 'node:readline';

/**
 * Starts test/support/serviceChild.ts and resolves with its URL once it listens. `root` is the tree it runs from:
 * this one, or an earlier build's (test/support/oldBuild.ts).
 */
export async function spawnServiceChild(
  dataDir: string,
  serviceSecret: string,
  env: NodeJS.ProcessEnv = {},
  root: string = process.cwd(),
): Promise<{ url: string; child: ChildProcess }> {
  const child = spawn(process.execPath, ['bin/run-ts.js', 'test/support/serviceChild.ts', dataDir, serviceSecret], {
    cwd: root,
    stdio: ['ignore', 'pipe', 'inherit'],
    env: { ...process.env, ...env },
  });
  const url = (await firstJsonLine<{ url: string }>(child, 'url', 'service child')).url;
  return { url, child };
}

/**
 * Starts test/support/devServiceChild.ts (what `agent-wallet dev` does in its data directory, on the run's
 * devnet) under `umask`, set by the shell that execs node: a worker thread cannot change its process's umask.
 */
export async function spawnDevServiceChild(
  dataDir: string,
  umask: string,
): Promise<{ url: string; apiKey: string; umask: string; child: ChildProcess }> {
  const child = spawn('sh', ['-c', `umask ${umask} && exec "$@"`, 'sh', process.execPath, 'bin/run-ts.js', 'test/support/devServiceChild.ts', dataDir], {
    stdio: ['ignore', 'pipe', 'inherit'],
  });
  return { ...(await firstJsonLine<{ url: string; apiKey: string; umask: string }>(child, 'url', 'dev service child')), child };
}

/** Resolves with the first JSON line of the child's stdout that has `key` (pino lines and the like are skipped). */
function firstJsonLine<T>(child: ChildProcess, key: string, what: string): Promise<T> {
  const lines = createInterface({ input: child.stdout! });
  return new Promise<T>((resolve, reject) => {
    const timer = setTimeout(() => reject(new Error(`${what} did not start in 60 s`)), 60_000);
    child.once('exit', (code) => reject(new Error(`${what} exited with ${code}`)));
    lines.on('line', (line) => {
      try {
        const msg = JSON.parse(line) as Record<string, unknown>;
        if (msg[key] !== undefined) {
          clearTimeout(timer);
          resolve(msg as T);
        }
      } catch {
        // not ours
      }
    });
  });
}

/** SIGTERM, and resolves once it has exited (the service closes its store and releases its lock). */
export function stopChild(child: ChildProcess): Promise<void> {
  return new Promise((resolve) => {
    if (child.exitCode !== null || child.signalCode !== null) return resolve();
    child.once('exit', () => resolve());
    child.kill('SIGTERM');
  });
}

export function killHard(child: ChildProcess): Promise<void> {
  return new Promise((resolve) => {
    if (child.exitCode !== null || child.signalCode !== null) return resolve();
    child.once('exit', () => resolve());
    child.kill('SIGKILL');
  });
}
