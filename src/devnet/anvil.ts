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
  statePath: string;
  /** Stops anvil with SIGTERM (it dumps its state on the way out) and waits for it to exit. */
  stop(): Promise<void>;
}

export interface StartAnvilParameters {
  chainId: number;
  /** `--state` file: loaded at start if present, dumped every second and at exit. */
  statePath: string;
  /** Number of mnemonic accounts to fund (anvil's default test mnemonic). */
  accounts?: number;
  /** Balance of each account, in ether. */
  balanceEther?: number;
  readyTimeoutMs?: number;
}

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
let exitHooksInstalled = false;

function installExitHooks(): void {
  if (exitHooksInstalled) return;
  exitHooksInstalled = true;
  process.on('exit', () => {
    for (const child of live) child.kill('SIGTERM');
  });
  for (const signal of ['SIGINT', 'SIGTERM', 'SIGHUP'] as const) {
    const onSignal = (): void => {
      for (const child of live) child.kill('SIGTERM');
      // Installing a listener disables Node's default "exit on signal"; restore it unless someone else (a CLI
      // doing its own graceful shutdown) is listening too.
      if (process.listenerCount(signal) === 1) {
        process.off(signal, onSignal);
        process.kill(process.pid, signal);
      }
    };
    process.on(signal, onSignal);
  }
}

const TAIL_BYTES = 8_192;

/** Starts anvil on a free loopback port and resolves once it answers `eth_chainId` with the expected id. */
export async function startAnvil(params: StartAnvilParameters): Promise<AnvilInstance> {
  let lastError: unknown;
  // A port found free can be taken before anvil binds it: try a few.
  for (let attempt = 0; attempt < 3; attempt++) {
    try {
      return await startAnvilOnce(params, await findFreePort());
    } catch (error) {
      lastError = error;
      if (!(error instanceof AnvilStartError) || !/address already in use|os error 98/i.test(error.output)) throw error;
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
  ) {
    super(output ? `${message}\n--- anvil output ---\n${output}` : message);
  }
}

async function startAnvilOnce(params: StartAnvilParameters, port: number): Promise<AnvilInstance> {
  const binary = resolveAnvilBinary();
  const args = [
    '--host', '127.0.0.1',
    '--port', String(port),
    '--chain-id', String(params.chainId),
    '--accounts', String(params.accounts ?? 20),
    '--balance', String(params.balanceEther ?? 1_000_000),
    '--state', params.statePath,
    '--state-interval', '1',
    // No per-transaction log lines: long runs would otherwise spend time on output nobody reads. (`--silent`
    // works too but is an undocumented alias; `anvil --help` lists `-q, --quiet`.)
    '--quiet',
  ];
  installExitHooks();
  const child = spawn(binary, args, { stdio: ['ignore', 'pipe', 'pipe'] });
  live.add(child);

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
    // anvil dumps its state on SIGTERM; a hung process still must not outlive us.
    const timer = setTimeout(() => child.kill('SIGKILL'), 10_000);
    await exited;
    clearTimeout(timer);
  };

  const deadline = Date.now() + (params.readyTimeoutMs ?? 15_000);
  let exitCode: number | null | undefined;
  void exited.then((code) => (exitCode = code));
  while (true) {
    if (exitCode !== undefined) throw new AnvilStartError(`anvil (chain ${params.chainId}) exited with ${exitCode} while starting`, output);
    const chainId = await readChainId(rpcUrl);
    // Still ours: if our anvil died on a port race, another node could be answering there.
    if (chainId === params.chainId && exitCode === undefined) break;
    if (chainId !== undefined) {
      await stop();
      throw new AnvilStartError(`anvil on ${rpcUrl} answered chain id ${chainId}, expected ${params.chainId}`, output);
    }
    if (Date.now() > deadline) {
      await stop();
      throw new AnvilStartError(`anvil (chain ${params.chainId}) did not answer on ${rpcUrl} in time`, output);
    }
    await new Promise((r) => setTimeout(r, 20));
  }
  return { chainId: params.chainId, rpcUrl, port, pid: child.pid!, statePath: params.statePath, stop };
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
