/**
 * The same load through both bundlers, in one run on one devnet chain (base): the built-in bundler, then the real
 * Alto (test/alto; `--safe-mode false`, automine anvil) as an outside bundler over JSON-RPC. Each of SENDERS agents
 * runs OPS operations one after another (prepare → submit → included, then the next; Alto takes one operation
 * per wallet at a time by default), all agents at once. Printed per bundler: operations included per second, and
 * submit → included latency p50/p99; beside them the chain's own floor measured in the same run: a plain transfer
 * sent → mined.
 *
 *   node bin/run-ts.js bench/bundlers.ts      BENCH_BUNDLER_SENDERS (20), BENCH_BUNDLER_OPS (10 per sender)
 */
import { randomBytes } from 'node:crypto';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { encodeFunctionData } from 'viem';
import { createChainWorker, type LocalChainWorker, type OperationOutcome } from '../src/chain/index.ts';
import type { ChainConfig } from '../src/config/chainConfig.ts';
import { devnetChain, devnetPublicClient, devnetWalletClient } from '../src/devnet/clients.ts';
import { counterAbi } from '../src/devnet/contracts.ts';
import { startDevnet } from '../src/devnet/devnet.ts';
import { launchAlto } from '../test/support/alto.ts';
import { fmt, pct } from './load.ts';

const SENDERS = Number(process.env.BENCH_BUNDLER_SENDERS ?? 20);
const OPS = Number(process.env.BENCH_BUNDLER_OPS ?? 10);
const CHAIN = 'base';

const dataDir = mkdtempSync(join(tmpdir(), 'aw-bench-bundlers-'));
const devnet = await startDevnet({ dataDir, log: () => undefined });
const manifestChain = devnet.manifest.chains.find((c) => c.name === CHAIN)!;
const builtin = devnet.chainConfigs().find((c) => c.name === CHAIN)!;
const counter = manifestChain.testContracts.counter;
const calls = [{ target: counter, value: '0', data: encodeFunctionData({ abi: counterAbi, functionName: 'increment' }) }];
const publicClient = devnetPublicClient(devnetChain(manifestChain));

interface Figures {
  opsPerSecond: number;
  latencies: number[];
}

async function measure(config: ChainConfig, label: string): Promise<Figures> {
  const worker: LocalChainWorker = await createChainWorker(config, { serviceSecret: randomBytes(32).toString('hex') });
  const waiters = new Map<string, (o: OperationOutcome) => void>();
  worker.onOutcome((hash, o) => waiters.get(hash.toLowerCase())?.(o));
  const run = async (agent: string, n: number, latencies: number[]) => {
    for (let i = 0; i < n; i++) {
      const ref = { apiClient: label, agentId: agent };
      const op = await worker.prepareOperation(ref, calls, { requestId: `${agent}-${i}` });
      const done = new Promise<OperationOutcome>((resolve) => waiters.set(op.hash.toLowerCase(), resolve));
      const t0 = performance.now();
      await worker.submitOperation(op);
      const o = await done;
      latencies.push(performance.now() - t0);
      if (o.state !== 'included' || !o.success) throw new Error(`${label}: not included: ${JSON.stringify(o)}`);
    }
  };
  try {
    // Warm-up: every wallet deployed, JIT warm.
    await Promise.all(Array.from({ length: SENDERS }, (_, s) => run(`agent-${s}`, 1, [])));
    const latencies: number[] = [];
    const t0 = performance.now();
    await Promise.all(Array.from({ length: SENDERS }, (_, s) => run(`agent-${s}`, OPS, latencies)));
    const seconds = (performance.now() - t0) / 1000;
    return { opsPerSecond: (SENDERS * OPS) / seconds, latencies };
  } finally {
    await worker.close();
  }
}

/** The chain's floor: a plain transfer from a funded account, sent → mined (its receipt), sequentially. */
async function transferFloor(n: number): Promise<number[]> {
  const wallet = devnetWalletClient(devnetChain(manifestChain), devnet.manifest.accounts.funded[1]!.privateKey);
  const out: number[] = [];
  for (let i = 0; i < n; i++) {
    const t0 = performance.now();
    const hash = await wallet.sendTransaction({ to: wallet.account.address, value: 1n });
    await publicClient.waitForTransactionReceipt({ hash, pollingInterval: 5 });
    out.push(performance.now() - t0);
  }
  return out;
}

const alto = await launchAlto({
  chain: CHAIN,
  rpcUrl: manifestChain.rpcUrl,
  entryPoint: manifestChain.entryPoint,
  setBalance: async (address, wei) => {
    await publicClient.request({ method: 'anvil_setBalance' as never, params: [address, `0x${wei.toString(16)}`] as never });
  },
  // As many executors as the built-in bundler has, and receipts looked for as often as ours are.
  executors: builtin.executorKeys.length,
  blockTimeMs: Number(process.env.BENCH_ALTO_BLOCK_TIME_MS ?? 50),
  extraArgs: (process.env.BENCH_ALTO_ARGS ?? '').split(' ').filter((a) => a !== ''),
});
try {
  const floor = await transferFloor(50);
  const mine = await measure(builtin, 'builtin');
  const theirs = await measure({ ...builtin, executorKeys: [], bundler: alto.bundlerConfig({ receiptPollMs: 20 }) }, 'alto');
  console.log(`bundlers on ${CHAIN}, ${SENDERS} agents × ${OPS} sequential operations (Counter.increment), one run:`);
  console.log(`  chain floor: a plain transfer sent → mined p50 ${fmt(pct(floor, 50))}, p99 ${fmt(pct(floor, 99))}`);
  for (const [name, f] of [['built-in', mine], ['Alto 0.0.20 (rpc)', theirs]] as const) {
    console.log(
      `  ${name.padEnd(18)} ${f.opsPerSecond.toFixed(1)} ops/s; submit → included p50 ${fmt(pct(f.latencies, 50))}, p99 ${fmt(pct(f.latencies, 99))}` +
        ` (${(pct(f.latencies, 50) / pct(floor, 50)).toFixed(1)}× the transfer floor)`,
    );
  }
} finally {
  await alto.stop();
  await devnet.stop();
  rmSync(dataDir, { recursive: true, force: true });
}
