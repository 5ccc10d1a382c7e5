import { spawn, type ChildProcess } from 'node:child_process';
import { mkdtempSync, rmSync } from 'node:fs';
import { createConnection } from 'node:net';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { freePort } from './net.ts';

export interface StartRedisOptions {
  /** Listen here (e.g. to restart on the same port); default: a free loopback port. */
  port?: number;
  /** Data directory (reuse one to restart with the same AOF); default: a fresh temp dir, removed by stop(). */
  dir?: string;
  /** Append-only file, fsynced every second (what production runs for the archive); default false. */
  appendonly?: boolean;
  /** requirepass. */
  password?: string;
}

export interface TestRedis {
  url: string;
  port: number;
  dir: string;
  /** SIGTERM (Redis writes its AOF and exits), then removes the temp dir it created. */
  stop(): Promise<void>;
  /** SIGKILL, at once: a crash. The temp dir stays (restart on it with `{ dir, port }`). */
  kill(): void;
}

const MISSING = 'redis-server not found: install redis-server (apt-get install redis-server), or run .ci/run';

/**
 * A real redis-server on 127.0.0.1 for one test file, resolved once it answers PING. Tests that need Redis
 * use this rather than a shared instance so they can stop, kill and restart it.
 */
export async function startRedis(opts: StartRedisOptions = {}): Promise<TestRedis> {
  const ownDir = opts.dir === undefined;
  const dir = opts.dir ?? mkdtempSync(join(tmpdir(), 'aw-redis-'));
  const port = opts.port ?? (await freePort());
  const args = [
    '--port', String(port),
    '--bind', '127.0.0.1',
    '--dir', dir,
    '--save', '',
    '--appendonly', opts.appendonly ? 'yes' : 'no',
    '--appendfsync', 'everysec',
    '--daemonize', 'no',
    '--logfile', '',
    ...(opts.password !== undefined ? ['--requirepass', opts.password] : []),
  ];
  const child = spawn('redis-server', args, { stdio: ['ignore', 'pipe', 'pipe'] });
  let output = '';
  child.stdout!.on('data', (b: Buffer) => (output = (output + b.toString()).slice(-4_000)));
  child.stderr!.on('data', (b: Buffer) => (output = (output + b.toString()).slice(-4_000)));
  const exited = new Promise<Error>((resolve) => {
    child.once('error', (e: NodeJS.ErrnoException) => resolve(e.code === 'ENOENT' ? new Error(MISSING) : e));
    child.once('exit', (code, signal) => resolve(new Error(`redis-server exited (${code ?? signal}) before answering PING:\n${output}`)));
  });
  const killOnExit = () => child.kill('SIGKILL');
  process.once('exit', killOnExit);

  const ready = await Promise.race([waitForPing(port, opts.password, 10_000), exited]);
  if (ready instanceof Error) {
    child.kill('SIGKILL');
    process.off('exit', killOnExit);
    if (ownDir) rmSync(dir, { recursive: true, force: true });
    throw ready;
  }

  const auth = opts.password !== undefined ? `:${encodeURIComponent(opts.password)}@` : '';
  return {
    url: `redis://${auth}127.0.0.1:${port}`,
    port,
    dir,
    async stop() {
      await terminate(child, 'SIGTERM');
      process.off('exit', killOnExit);
      if (ownDir) rmSync(dir, { recursive: true, force: true });
    },
    kill() {
      child.kill('SIGKILL');
      process.off('exit', killOnExit);
    },
  };
}

function terminate(child: ChildProcess, signal: NodeJS.Signals): Promise<void> {
  return new Promise((resolve) => {
    if (child.exitCode !== null || child.signalCode !== null) return resolve();
    child.once('exit', () => resolve());
    child.kill(signal);
  });
}

/** Resolves once the server answers PING (+PONG) on a raw connection; rejects after `timeoutMs`. */
async function waitForPing(port: number, password: string | undefined, timeoutMs: number): Promise<true | Error> {
  const deadline = Date.now() + timeoutMs;
  while (Date.now() < deadline) {
    if (await pingOnce(port, password)) return true;
    await new Promise((r) => setTimeout(r, 20));
  }
  return new Error(`redis-server on port ${port} did not answer PING within ${timeoutMs} ms`);
}

function pingOnce(port: number, password: string | undefined): Promise<boolean> {
  return new Promise((resolve) => {
    const socket = createConnection({ host: '127.0.0.1', port });
    let reply = '';
    const done = (ok: boolean) => {
      socket.destroy();
      resolve(ok);
    };
    socket.setTimeout(500, () => done(false));
    socket.once('error', () => done(false));
    socket.on('connect', () => socket.write(`${password !== undefined ? `AUTH ${password}\r\n` : ''}PING\r\n`));
    socket.on('data', (b) => {
      reply += b.toString();
      if (reply.includes('+PONG')) done(true);
      else if (reply.includes('-')) done(false); // -LOADING, -NOAUTH…: not ready yet
    });
  });
}
