import { spawn, type ChildProcess } from 'node:child_process';
import { createRequire } from 'node:module';
import { createServer } from 'node:net';
import { dirname, join } from 'node:path';

/** One running anvil node, owned by this process. */
export interface AnvilInstance {
  chainId: number;
  rpcUrl: string;
  port: number;
  pid: number;
  /** Stops anvil with SIGTERM and waits for it to exit (it saves nothing itself: see snapshotter.ts). */
  stop(): Promise<void>;
}

export interface StartAnvilParameters {
  chainId: number;
  /** A state snapshot (plain JSON) to start from; without it the chain starts at genesis. */
  loadStatePath?: string;
  /**
   * Put in the child's environment as `AGENT_WALLET_DEVNET_NODE`, so that a later start can tell this anvil
   * from any other process that reuses its pid (see pidfile.ts).
   */
  marker: string;
  /** Number of mnemonic accounts to fund (anvil's default test mnemonic). */
  accounts?: number;
  /** Balance of each account, in ether. */
  balanceEther?: number;
  readyTimeoutMs?: number;
  /** Aborts a start in progress: the child is stopped and the start rejects. */
  signal?: AbortSignal;
  /** Called as soon as the child exists, before it answers: lets the caller record its pid early. */
  onSpawn?: (pid: number) => void;
  /** Where to look for a port (default: one the kernel just gave out); a taken port is tried again elsewhere. */
  pickPort?: () => Promise<number>;
}

/** The environment variable that names which devnet state an anvil serves. */
export const DEVNET_NODE_ENV = 'AGENT_WALLET_DEVNET_NODE';

// npm installs the binary in an optional per-platform package; the `@foundry-rs/anvil` wrapper would resolve
// it the same way but only after its (unapproved) install script, so we go to the platform package directly.
const PLATFORM_PACKAGES: Readonly<Record<string, string>> = {
  'linux-x64': '@foundry-rs/anvil-linux-amd64',
  'linux-arm64': '@foundry-rs/anvil-linux-arm64',
  'darwin-x64': '@foundry-rs/anvil-darwin-amd64',
  'darwin-arm64': '@foundry-rs/anvil-darwin-arm64',
  'win32-x64': '@foundry-rs/anvil-win32-amd64',
};

/** Path of the anvil binary installed with `@foundry-rs/anvil`, or a clear error on an unsupported platform. */
export function resolveAnvilBinary(): string {
  const platform = `${process.platform}-${process.arch}`;
  const pkg = PLATFORM_PACKAGES[platform];
  if (!pkg) throw new Error(`anvil: no prebuilt binary for ${platform} (supported: ${Object.keys(PLATFORM_PACKAGES).join(', ')})`);
  let pkgJson: string;
  try {
    pkgJson = createRequire(import.meta.url).resolve(`${pkg}/package.json`);
  } catch {
    throw new Error(`anvil: ${pkg} is not installed; run \`npm install\` on this ${platform} machine (it is an optional dependency of @foundry-rs/anvil)`);
  }
  return join(dirname(pkgJson), 'bin', process.platform === 'win32' ? 'anvil.exe' : 'anvil');
}

/** A loopback port that was free a moment ago (the OS picks it); the caller retries if it is taken meanwhile. */
export async function findFreePort(): Promise<number> {
  return new Promise((resolve, reject) => {
    const server = createServer();
    server.unref();
    server.once('error', reject);
    server.listen(0, '127.0.0.1', () => {
      const address = server.address();
      server.close(() => (typeof address === 'object' && address ? resolve(address.port) : reject(new Error('no port'))));
    });
  });
}

// Every live child, so that the parent's exit or a signal never leaves an orphan anvil behind.
const live = new Set<ChildProcess>();
// What to finish before a signal ends the process (the devnet's final snapshots), when nobody else handles it.
const beforeSignalExit = new Set<() => Promise<void>>();
let exitHooksInstalled = false;
const SIGNAL_SHUTDOWN_MS = 10_000;

/**
 * Registers work to finish (bounded by 10 s) when SIGINT, SIGTERM or SIGHUP is about to end the process
 * because nothing else handles it. Returns the unregister function.
 */
export function onSignalExit(task: () => Promise<void>): () => void {
  installExitHooks();
  beforeSignalExit.add(task);
  return () => beforeSignalExit.delete(task);
}

function installExitHooks(): void {
  if (exitHooksInstalled) return;
  exitHooksInstalled = true;
  // The last resort: nothing asynchronous can run here, so anvil is stopped without a final snapshot.
  process.on('exit', () => {
    for (const child of live) child.kill('SIGTERM');
  });
  for (const signal of ['SIGINT', 'SIGTERM', 'SIGHUP'] as const) {
    let exiting = false;
    const onSignal = (): void => {
      // Someone else (a CLI doing its own graceful shutdown) handles the signal: it stops the devnet, and the
      // chains must stay up while the service drains. The exit hook is still the backstop.
      if (process.listenerCount(signal) > 1) return;
      // Installing a listener disabled Node's default "exit on signal": finish the registered work, stop the
      // children, then restore the default and re-raise. A second signal does not wait.
      const reraise = (): void => {
        for (const child of live) child.kill('SIGTERM');
        process.off(signal, onSignal);
        process.kill(process.pid, signal);
      };
      if (exiting) return reraise();
      exiting = true;
      const tasks = Promise.allSettled([...beforeSignalExit].map((task) => task()));
      const timeout = new Promise((resolve) => setTimeout(resolve, SIGNAL_SHUTDOWN_MS).unref());
      void Promise.race([tasks, timeout]).then(reraise);
    };
    process.on(signal, onSignal);
  }
}

const TAIL_BYTES = 8_192;

/** Starts anvil on a free loopback port and resolves once it answers `eth_chainId` with the expected id. */
export async function startAnvil(params: StartAnvilParameters): Promise<AnvilInstance> {
  let lastError: unknown;
  // A port found free can be taken before anvil binds it (another test's anvil, started in the same instant): try a
  // few. Either our anvil says the address is in use, or the other node answers first with its own chain id.
  for (let attempt = 0; attempt < 5; attempt++) {
    try {
      return await startAnvilOnce(params, await (params.pickPort ?? findFreePort)());
    } catch (error) {
      lastError = error;
      if (!(error instanceof AnvilStartError) || !error.portTaken) throw error;
    }
  }
  throw lastError;
}

export class AnvilStartError extends Error {
  override name = 'AnvilStartError';
  constructor(
    message: string,
    /** The tail of anvil's stdout and stderr. */
    readonly output: string,
    /** Another process holds the port: a new port may succeed. */
    readonly portTaken = /address already in use|os error 98/i.test(output),
  ) {
    super(output ? `${message}\n--- anvil output ---\n${output}` : message);
  }
}

async function startAnvilOnce(params: StartAnvilParameters, port: number): Promise<AnvilInstance> {
  params.signal?.throwIfAborted();
  const binary = resolveAnvilBinary();
  const args = [
    '--host', '127.0.0.1',
    '--port', String(port),
    '--chain-id', String(params.chainId),
    '--accounts', String(params.accounts ?? 20),
    '--balance', String(params.balanceEther ?? 1_000_000),
    // anvil's own `--state` rewrites its file in place every interval (a kill tears it): the devnet takes
    // snapshots itself (snapshotter.ts) and only hands anvil one to start from.
    ...(params.loadStatePath ? ['--load-state', params.loadStatePath] : []),
    // No per-transaction log lines: long runs would otherwise spend time on output nobody reads. (`--silent`
    // works too but is an undocumented alias; `anvil --help` lists `-q, --quiet`.)
    '--quiet',
  ];
  installExitHooks();
  const child = spawn(binary, args, { stdio: ['ignore', 'pipe', 'pipe'], env: { ...process.env, [DEVNET_NODE_ENV]: params.marker } });
  live.add(child);
  if (child.pid !== undefined) params.onSpawn?.(child.pid);

  let output = '';
  const keep = (chunk: Buffer): void => {
    output = (output + chunk.toString('utf8')).slice(-TAIL_BYTES);
  };
  child.stdout!.on('data', keep);
  child.stderr!.on('data', keep);

  const exited = new Promise<number | null>((resolve) => {
    child.once('exit', (code, signal) => {
      live.delete(child);
      resolve(code ?? (signal ? -1 : null));
    });
    child.once('error', (error) => {
      live.delete(child);
      keep(Buffer.from(String(error)));
      resolve(-1);
    });
  });

  const rpcUrl = `http://127.0.0.1:${port}`;
  const stop = async (): Promise<void> => {
    if (child.exitCode === null && child.signalCode === null) child.kill('SIGTERM');
    // A hung process still must not outlive us.
    const timer = setTimeout(() => child.kill('SIGKILL'), 10_000);
    await exited;
    clearTimeout(timer);
  };

  // The caller gave up (another chain failed): this start must not finish and leave anvil running.
  const stopIfAborted = async (): Promise<void> => {
    if (!params.signal?.aborted) return;
    await stop();
    throw new AnvilStartError(`anvil (chain ${params.chainId}) start aborted: ${String(params.signal.reason)}`, '');
  };

  // Loading a snapshot takes anvil a while before it listens (measured: 1.3 s for 12 MB of JSON, 0.1 s for none).
  const deadline = Date.now() + (params.readyTimeoutMs ?? 30_000);
  let exitCode: number | null | undefined;
  void exited.then((code) => (exitCode = code));
  while (true) {
    if (exitCode !== undefined) throw new AnvilStartError(`anvil (chain ${params.chainId}) exited with ${exitCode} while starting`, output);
    await stopIfAborted();
    const chainId = await readChainId(rpcUrl);
    // Still ours: if our anvil died on a port race, another node could be answering there.
    if (chainId === params.chainId && exitCode === undefined) break;
    if (chainId !== undefined) {
      await stop();
      throw new AnvilStartError(`anvil on ${rpcUrl} answered chain id ${chainId}, expected ${params.chainId}`, output, true);
    }
    if (Date.now() > deadline) {
      await stop();
      throw new AnvilStartError(`anvil (chain ${params.chainId}) did not answer on ${rpcUrl} in time`, output);
    }
    await new Promise((r) => setTimeout(r, 20));
  }
  await stopIfAborted();
  return { chainId: params.chainId, rpcUrl, port, pid: child.pid!, stop };
}

async function readChainId(rpcUrl: string): Promise<number | undefined> {
  try {
    const response = await fetch(rpcUrl, {
      method: 'POST',
      headers: { 'content-type': 'application/json' },
      body: JSON.stringify({ jsonrpc: '2.0', id: 1, method: 'eth_chainId', params: [] }),
      signal: AbortSignal.timeout(1_000),
    });
    const body = (await response.json()) as { result?: string };
    return body.result ? Number(body.result) : undefined;
  } catch {
    return undefined; // not listening yet
  }
}
