import { spawn, type ChildProcess } from 'node:child_process';
import { createInterface } from 'node:readline';

/** Starts test/support/serviceChild.ts and resolves with its URL once it listens. */
export async function spawnServiceChild(
  dataDir: string,
  serviceSecret: string,
  env: NodeJS.ProcessEnv = {},
): Promise<{ url: string; child: ChildProcess }> {
  const child = spawn(process.execPath, ['bin/run-ts.js', 'test/support/serviceChild.ts', dataDir, serviceSecret], {
    stdio: ['ignore', 'pipe', 'inherit'],
    env: { ...process.env, ...env },
  });
  const lines = createInterface({ input: child.stdout! });
  const url = await new Promise<string>((resolve, reject) => {
    const timer = setTimeout(() => reject(new Error('service child did not start in 60 s')), 60_000);
    child.once('exit', (code) => reject(new Error(`service child exited with ${code}`)));
    lines.on('line', (line) => {
      try {
        const msg = JSON.parse(line) as { url?: string };
        if (msg.url) {
          clearTimeout(timer);
          resolve(msg.url);
        }
      } catch {
        // not ours: pino lines and the like
      }
    });
  });
  return { url, child };
}

export function killHard(child: ChildProcess): Promise<void> {
  return new Promise((resolve) => {
    if (child.exitCode !== null || child.signalCode !== null) return resolve();
    child.once('exit', () => resolve());
    child.kill('SIGKILL');
  });
}
