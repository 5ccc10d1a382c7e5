/**
 * CPU time of the chain worker alone per operation, for before/after comparisons of src/chain: the worker's
 * steps of one request (simulate, prepare, submit, bundle, settle) for Counter.increment through warm
 * wallets, without the gateway, the store or the controller. Process CPU (process.cpuUsage) is counted,
 * not wall time, so other load on the machine moves it far less than a throughput figure; the devnet's
 * anvils are other processes and are not counted. Every round submits all its operations at once, so the
 * bundles are full and alike from run to run.
 *
 *   node bin/run-ts.js bench/chainWorkerCpu.ts            CHAIN_CPU_WALLETS (64), CHAIN_CPU_ROUNDS (20)
 */
import { randomBytes } from 'node:crypto';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { encodeFunctionData } from 'viem';
import { createChainWorker, type OperationOutcome } from '../src/chain/index.ts';
import { counterAbi } from '../src/devnet/contracts.ts';
import { startDevnet } from '../src/devnet/devnet.ts';

const WALLETS = Number(process.env.CHAIN_CPU_WALLETS ?? 64);
const ROUNDS = Number(process.env.CHAIN_CPU_ROUNDS ?? 20);

const dataDir = mkdtempSync(join(tmpdir(), 'aw-chain-cpu-'));
const devnet = await startDevnet({ dataDir, log: () => undefined });
const config = devnet.chainConfigs().find((c) => c.name === 'base')!;
const counter = devnet.manifest.chains.find((c) => c.name === 'base')!.testContracts.counter;
const worker = await createChainWorker(config, { serviceSecret: randomBytes(32).toString('hex') });
const waiters = new Map<string, (o: OperationOutcome) => void>();
worker.onOutcome((hash, o) => waiters.get(hash.toLowerCase())?.(o));
const calls = [{ target: counter, value: '0', data: encodeFunctionData({ abi: counterAbi, functionName: 'increment' }) }];
const refs = Array.from({ length: WALLETS }, (_, i) => ({ apiClient: 'cpu', agentId: `agent-${i}` }));

let n = 0;
async function round(): Promise<void> {
  const ops = await Promise.all(
    refs.map(async (ref) => {
      const sim = await worker.simulate(ref, calls);
      if (!sim.ok) throw new Error(sim.error.message);
      return worker.prepareOperation(ref, calls, { requestId: `r${n++}` });
    }),
  );
  const done = ops.map((op) => new Promise<OperationOutcome>((resolve) => waiters.set(op.hash.toLowerCase(), resolve)));
  await Promise.all(ops.map((op) => worker.submitOperation(op)));
  for (const o of await Promise.all(done)) if (o.state !== 'included' || !o.success) throw new Error(`not included: ${JSON.stringify(o)}`);
  waiters.clear();
}

await round(); // deploys the wallets; JIT warm-up
await round();
const stats0 = structuredClone(worker.bundlerStats());
const cpu0 = process.cpuUsage();
const t0 = performance.now();
for (let r = 0; r < ROUNDS; r++) await round();
const cpu = process.cpuUsage(cpu0);
const seconds = (performance.now() - t0) / 1000;
const ops = WALLETS * ROUNDS;
const bundles = worker.bundlerStats().bundles - stats0.bundles;
const cpuMs = (cpu.user + cpu.system) / 1000;
console.log(
  `chain worker alone: ${ops} operations in ${bundles} bundles (${(ops / bundles).toFixed(1)} per bundle), ${seconds.toFixed(1)} s: ` +
    `${(cpuMs / ops).toFixed(3)} ms CPU per operation (${((cpu.user / 1000) / ops).toFixed(3)} user), ${(ops / seconds).toFixed(0)} ops/s`,
);
await worker.close();
await devnet.stop();
rmSync(dataDir, { recursive: true, force: true });
