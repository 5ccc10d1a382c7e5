import { spawn, spawnSync, type ChildProcess } from 'node:child_process';
import { resolve } from 'node:path';
import { generatePrivateKey, privateKeyToAccount } from 'viem/accounts';
import type { ChainName } from '../../src/config/chains.ts';
import { RpcBundlerConfigSchema, type ChainConfig, type RpcBundlerConfig } from '../../src/config/chainConfig.ts';
import { freePort } from './net.ts';
import { testDevnet } from './env.ts';

const INSTALL = resolve(import.meta.dirname, '../alto/install.sh');

/** The cached Alto executable (test/alto/install.sh; `npm test`'s pretest installed it). */
export function altoBin(): string {
  const r = spawnSync('bash', [INSTALL], { encoding: 'utf8' });
  if (r.status !== 0) throw new Error(`${INSTALL} failed: ${r.stderr}`);
  return r.stdout.trim().split('\n').at(-1)!;
}

export interface AltoProcess {
  url: string;
  chain: ChainName;
  /** The executor account Alto sends bundles from. */
  executor: `0x${string}`;
  /** The service's bundler configuration for this Alto. */
  bundlerConfig(patch?: Partial<Omit<RpcBundlerConfig, 'kind' | 'url'>>): RpcBundlerConfig;
  output(): string;
  /** SIGKILL: its in-memory mempool is lost with it. */
  kill(): Promise<void>;
  /** Starts it again on the same port and keys (after kill), in `bundleMode` (default: as before). */
  restart(bundleMode?: 'auto' | 'manual'): Promise<void>;
  /** The senders of the operations in its mempool (debug_bundler_dumpMempool; manual mode enables debug methods). */
  mempoolSenders(): Promise<string[]>;
  /** Switches a manual-mode Alto to bundling by itself (debug_bundler_setBundlingMode). */
  setAutoBundling(): Promise<void>;
  /** Whether it holds (or has included) the operation: pimlico_getUserOperationStatus. */
  knows(hash: string): Promise<boolean>;
  stop(): Promise<void>;
}

/**
 * Runs Alto against one chain of the shared devnet, on its own fresh executor and utility keys (so test files
 * never share an executor's nonces), funded with anvil_setBalance. `--safe-mode false`: anvil has no JavaScript
 * tracer, so this proves the JSON-RPC path, not ERC-7562 compliance (docs/operations.md).
 */
export async function startAlto(chain: ChainName, opts: { extraArgs?: string[]; bundleMode?: 'auto' | 'manual' } = {}): Promise<AltoProcess> {
  const devnet = testDevnet();
  const client = devnet.publicClient(chain);
  return launchAlto({
    chain,
    rpcUrl: devnet.chain(chain).rpcUrl,
    entryPoint: devnet.chain(chain).entryPoint,
    setBalance: async (address, wei) => {
      await client.request({ method: 'anvil_setBalance' as never, params: [address, `0x${wei.toString(16)}`] as never });
    },
    ...opts,
  });
}

export interface LaunchAltoOptions {
  chain: ChainName;
  rpcUrl: string;
  entryPoint: `0x${string}`;
  /** Gives Alto's fresh executor and utility accounts their gas (anvil_setBalance on a devnet). */
  setBalance(address: `0x${string}`, wei: bigint): Promise<void>;
  extraArgs?: string[];
  bundleMode?: 'auto' | 'manual';
  /** Executor accounts Alto sends bundles from (default 1). */
  executors?: number;
  /** Alto's --block-time: how often it looks for receipts (default 250 ms). */
  blockTimeMs?: number;
}

/** Runs Alto against any devnet chain (startAlto: the test run's shared devnet; benchmarks: their own). */
export async function launchAlto(opts: LaunchAltoOptions): Promise<AltoProcess> {
  const { chain, rpcUrl, entryPoint } = opts;
  const executorKeys = Array.from({ length: opts.executors ?? 1 }, () => generatePrivateKey());
  const executorKey = executorKeys[0]!;
  const utilityKey = generatePrivateKey();
  const executor = privateKeyToAccount(executorKey).address;
  for (const key of [...executorKeys, utilityKey]) await opts.setBalance(privateKeyToAccount(key).address, 1_000n * 10n ** 18n);
  const port = await freePort();
  const bin = altoBin();
  const args = [
    '--entrypoints', entryPoint,
    '--executor-private-keys', executorKeys.join(','),
    '--utility-private-key', utilityKey,
    '--rpc-url', rpcUrl,
    '--safe-mode', 'false',
    '--port', String(port),
    '--log-level', 'warn',
    // The devnet mines a block per transaction: poll for receipts and new operations at its pace.
    '--min-bundle-interval', '20',
    '--block-time', String(opts.blockTimeMs ?? 250),
    '--utility-wallet-monitor', 'false',
    // Alto prices the L1 data fee itself on an L2 (the devnet's stand-ins at the real addresses answer it).
    '--chain-type', chain === 'base' ? 'op-stack' : chain === 'arbitrum' ? 'arbitrum' : 'default',
    ...(opts.extraArgs ?? []),
  ];
  let bundleMode = opts.bundleMode ?? 'auto';
  let child: ChildProcess | undefined;
  let out = '';
  const url = `http://127.0.0.1:${port}`;

  async function start(): Promise<void> {
    child = spawn(bin, [...args, '--bundle-mode', bundleMode, ...(bundleMode === 'manual' ? ['--enable-debug-endpoints', 'true'] : [])], { stdio: ['ignore', 'pipe', 'pipe'] });
    child.stdout!.on('data', (c: Buffer) => (out = (out + c.toString()).slice(-20_000)));
    child.stderr!.on('data', (c: Buffer) => (out = (out + c.toString()).slice(-20_000)));
    const exited = new Promise<never>((_, fail) => child!.once('exit', (code) => fail(new Error(`alto exited ${code}: ${out.slice(-3_000)}`))));
    const deadline = Date.now() + 60_000;
    const ready = (async () => {
      for (;;) {
        const ok = await fetch(url, {
          method: 'POST',
          headers: { 'content-type': 'application/json' },
          body: JSON.stringify({ jsonrpc: '2.0', id: 1, method: 'eth_supportedEntryPoints', params: [] }),
        })
          .then((r) => r.ok)
          .catch(() => false);
        if (ok) return;
        if (Date.now() > deadline) throw new Error(`alto did not answer within 60 s: ${out.slice(-3_000)}`);
        await new Promise((r) => setTimeout(r, 200));
      }
    })();
    await Promise.race([ready, exited]);
    exited.catch(() => undefined);
  }

  async function kill(): Promise<void> {
    const c = child;
    if (!c || c.exitCode !== null || c.signalCode !== null) return;
    const gone = new Promise((r) => c.once('exit', r));
    c.kill('SIGKILL');
    await gone;
  }

  async function rpc(method: string, params: unknown[]): Promise<unknown> {
    const r = await fetch(url, { method: 'POST', headers: { 'content-type': 'application/json' }, body: JSON.stringify({ jsonrpc: '2.0', id: 1, method, params }) });
    const answer = (await r.json()) as { result?: unknown; error?: { message: string } };
    if (answer.error) throw new Error(`alto ${method}: ${answer.error.message}`);
    return answer.result;
  }

  await start();
  return {
    url,
    chain,
    executor,
    bundlerConfig: (patch = {}) => RpcBundlerConfigSchema.parse({ kind: 'rpc', url, receiptPollMs: 50, recheckAfterMs: 1_000, ...patch }),
    output: () => out,
    kill,
    restart: (mode) => {
      if (mode) bundleMode = mode;
      return start();
    },
    async mempoolSenders() {
      const ops = (await rpc('debug_bundler_dumpMempool', [entryPoint])) as { sender?: string }[] | null;
      return (ops ?? []).map((o) => (o.sender ?? '').toLowerCase());
    },
    async setAutoBundling() {
      await rpc('debug_bundler_setBundlingMode', ['auto']);
    },
    async knows(hash) {
      const r = await fetch(url, {
        method: 'POST',
        headers: { 'content-type': 'application/json' },
        body: JSON.stringify({ jsonrpc: '2.0', id: 1, method: 'pimlico_getUserOperationStatus', params: [hash] }),
      });
      const status = ((await r.json()) as { result?: { status?: string } }).result?.status;
      return status !== undefined && status !== 'not_found';
    },
    async stop() {
      const c = child;
      if (!c || c.exitCode !== null || c.signalCode !== null) return;
      const gone = new Promise((r) => c.once('exit', r));
      c.kill('SIGTERM');
      const t = setTimeout(() => c.kill('SIGKILL'), 5_000);
      await gone;
      clearTimeout(t);
    },
  };
}

/** The chains with the outside bundlers given by name (a JSON string, as a child process gets it, or an object). */
export function withBundlers(chains: ChainConfig[], bundlers: string | Partial<Record<ChainName, RpcBundlerConfig>> | undefined): ChainConfig[] {
  const byChain = typeof bundlers === 'string' ? (JSON.parse(bundlers) as Partial<Record<ChainName, RpcBundlerConfig>>) : (bundlers ?? {});
  return chains.map((c) => {
    const bundler = byChain[c.name];
    return bundler ? { ...c, executorKeys: [], bundler } : c;
  });
}
