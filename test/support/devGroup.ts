import { spawn, type ChildProcess } from 'node:child_process';
import { createWriteStream } from 'node:fs';
import { createInterface } from 'node:readline';

/**
 * `npm start` as a process group of its own: `agent-wallet dev` (the devnet's anvils, every role, the faucet) in
 * `dataDir`, on free ports. `killGroup` is what a power cut or an OOM kill of the whole group does: SIGKILL to
 * node and every anvil at once, nothing flushed. Its output goes to `logPath` (appended), for a post-mortem.
 */
export interface DevGroup {
  child: ChildProcess;
  /** Resolves once it listens: its URL and the development key it printed. */
  ready: Promise<{ url: string; apiKey: string }>;
  /** Resolves when node has exited (its anvils got the same signal). */
  exited: Promise<void>;
  /** SIGKILL to the whole process group; resolves once node has exited. */
  killGroup(): Promise<void>;
  /** SIGTERM to node (it stops the service and the devnet with their final snapshots); resolves on exit. */
  stop(): Promise<void>;
}

export function startDevGroup(dataDir: string, logPath: string): DevGroup {
  const child = spawn(process.execPath, ['bin/agent-wallet.js', 'dev', '--data-dir', dataDir, '--port', '0', '--faucet-port', '0'], {
    stdio: ['ignore', 'pipe', 'pipe'],
    detached: true, // its own process group: the anvils it spawns are in it
  });
  const log = createWriteStream(logPath, { flags: 'a' });
  child.stderr!.pipe(log, { end: false });
  const exited = new Promise<void>((resolve) => child.once('exit', () => resolve()));
  const ready = new Promise<{ url: string; apiKey: string }>((resolve, reject) => {
    let url: string | undefined;
    const lines = createInterface({ input: child.stdout! });
    lines.on('line', (line) => {
      log.write(line + '\n');
      url ??= /^agent-wallet is listening on (\S+)/.exec(line)?.[1];
      const key = /^development API key \(sponsored\): (\S+)/.exec(line)?.[1];
      if (url !== undefined && key !== undefined) resolve({ url, apiKey: key });
    });
    void exited.then(() => reject(new Error(`agent-wallet dev exited (${child.exitCode ?? child.signalCode}) before it listened; see ${logPath}`)));
  });
  ready.catch(() => undefined); // a group killed while starting never gets ready: not an unhandled rejection
  return {
    child,
    ready,
    exited,
    async killGroup() {
      if (child.exitCode === null && child.signalCode === null) {
        try {
          process.kill(-child.pid!, 'SIGKILL');
        } catch {
          // already gone
        }
      }
      await exited;
    },
    async stop() {
      if (child.exitCode === null && child.signalCode === null) child.kill('SIGTERM');
      await exited;
    },
  };
}
