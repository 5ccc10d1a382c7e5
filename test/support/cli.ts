import { spawn, type ChildProcess } from 'node:child_process';
import { connect, createServer, type Server, type Socket } from 'node:net';

export interface CliRun {
  code: number | null;
  stdout: string;
  stderr: string;
}

/**
 * Runs `agent-wallet <args>` as a subprocess with `env` over a clean environment (no AGENT_WALLET_* of the test
 * process leaks in), optionally feeding `input` on stdin. Resolves with the exit code and both streams.
 */
export function runCli(args: readonly string[], env: Record<string, string | undefined>, input?: string): Promise<CliRun> & { child: ChildProcess } {
  const clean = Object.fromEntries(Object.entries(process.env).filter(([k]) => !k.startsWith('AGENT_WALLET_')));
  const child = spawn(process.execPath, ['bin/agent-wallet.js', ...args], {
    env: { ...clean, ...Object.fromEntries(Object.entries(env).filter((e): e is [string, string] => e[1] !== undefined)) },
    stdio: ['pipe', 'pipe', 'pipe'],
  });
  let stdout = '';
  let stderr = '';
  child.stdout!.on('data', (d: Buffer) => (stdout += d.toString()));
  child.stderr!.on('data', (d: Buffer) => (stderr += d.toString()));
  child.stdin!.end(input ?? '');
  const done = new Promise<CliRun>((resolve) => child.once('close', (code) => resolve({ code, stdout, stderr })));
  return Object.assign(done, { child });
}

/** What a proxied connection does: forward both ways, forward the request but drop the answer, or drop both. */
export type ProxyMode = 'pass' | 'lose-answer' | 'lose-request';

/**
 * A TCP proxy in front of the service whose connections fail in chosen ways, in order: the n-th connection gets
 * `modes[n]` (then 'pass'). 'lose-answer' is the outcome the client cannot know: the request arrived, its answer
 * never comes back. `requests` counts the bytes of requests forwarded, by connection.
 */
export async function lossyProxy(target: URL, modes: ProxyMode[]): Promise<{ url: string; close(): Promise<void> }> {
  const sockets = new Set<Socket>();
  let n = 0;
  const server: Server = createServer((client) => {
    const mode = modes[n++] ?? 'pass';
    sockets.add(client);
    client.on('close', () => sockets.delete(client));
    client.on('error', () => undefined);
    if (mode === 'lose-request') {
      client.resume(); // read and drop: nothing reaches the service
      return;
    }
    const upstream = connect(Number(target.port), target.hostname);
    sockets.add(upstream);
    upstream.on('close', () => sockets.delete(upstream));
    upstream.on('error', () => client.destroy());
    client.pipe(upstream);
    if (mode === 'pass') upstream.pipe(client);
    else upstream.resume(); // the answer is read and dropped
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const { port } = server.address() as { port: number };
  return {
    url: `http://127.0.0.1:${port}`,
    close: () =>
      new Promise<void>((resolve) => {
        for (const s of sockets) s.destroy();
        server.close(() => resolve());
      }),
  };
}
