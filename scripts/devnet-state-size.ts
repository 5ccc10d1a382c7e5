/**
 * How the devnet's chain state grows, in figures (prints, asserts nothing; docs/benchmarks.md "Devnet chain
 * state" quotes it). Starts a devnet and the embedded service in a temp dir, then on the ethereum chain:
 *   1. lone operations: one agent, one request at a time, so every transaction is a bundle of one UserOperation;
 *   2. bundles under load: many agents over the three chains (bundles of several operations);
 *   3. plain ETH transfers;
 * and after each phase dumps the chain (`anvil_dumpState`) and prints bytes per transaction in three forms:
 * what anvil's own `--state` file held (plain JSON), the devnet's snapshot while it runs (anvil's gzipped
 * dump), and the snapshot after a restart (call traces left out; see stateFile.ts). Then the snapshot write
 * time, the restart, and the CPU an idle devnet takes against anvil's `--state-interval 1` on the same state.
 *
 * `node bin/run-ts.js scripts/devnet-state-size.ts`; knobs: STATE_LONE_OPS (1000), STATE_LOAD_SECONDS (20),
 * STATE_TRANSFERS (1000), STATE_IDLE_SECONDS (10).
 */
import { spawn } from 'node:child_process';
import { randomBytes } from 'node:crypto';
import { mkdtempSync, readFileSync, rmSync, statSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { gunzipSync, gzipSync } from 'node:zlib';
import { encodeEventTopics } from 'viem';
import { entryPoint07Abi } from 'viem/account-abstraction';
import { loadGenerator } from '../bench/load.ts';
import type { ChainName } from '../src/config/chains.ts';
import { findFreePort, resolveAnvilBinary } from '../src/devnet/anvil.ts';
import { devnetChain, devnetWalletClient } from '../src/devnet/clients.ts';
import { startDevnet, type Devnet } from '../src/devnet/devnet.ts';
import { nodeRpc } from '../src/devnet/rpc.ts';
import { chainStateFiles } from '../src/devnet/stateFile.ts';
import { createKey } from '../src/keys/manage.ts';
import { startEmbeddedService } from '../src/roles/embedded.ts';

const LONE_OPS = Number(process.env.STATE_LONE_OPS ?? 1000);
const LOAD_SECONDS = Number(process.env.STATE_LOAD_SECONDS ?? 20);
const TRANSFERS = Number(process.env.STATE_TRANSFERS ?? 1000);
const IDLE_SECONDS = Number(process.env.STATE_IDLE_SECONDS ?? 10);
const CHAIN: ChainName = 'ethereum';

const dataDir = mkdtempSync(join(tmpdir(), 'aw-state-size-'));
const files = chainStateFiles(join(dataDir, 'devnet'), CHAIN);
let devnet: Devnet = await startDevnet({ dataDir, log: () => undefined });
const service = await startEmbeddedService({ dataDir, chains: devnet.chainConfigs(), serviceSecret: randomBytes(32).toString('hex'), port: 0, logLevel: 'warn' });
const { api_key } = await createKey(service.store, { mode: 'sponsored', requestsPerSecond: 100_000, burst: 100_000 });
const counterOf = (chain: ChainName) => devnet.manifest.chains.find((c) => c.name === chain)!.testContracts.counter;
const load = loadGenerator({ url: service.url, apiKey: api_key, store: service.store, counterOf });
const chainOf = (d: Devnet) => d.manifest.chains.find((c) => c.name === CHAIN)!;
let rpc = nodeRpc(chainOf(devnet).rpcUrl);

interface Dump {
  block: number;
  txs: number;
  /** anvil's `--state` file: the dump's JSON. */
  json: number;
  /** The devnet's snapshot while it runs: anvil's gzipped dump as is. */
  gz: number;
  /** The snapshot after a restart: the same without call traces, gzipped. */
  gzNoTraces: number;
  jsonNoTraces: number;
}

async function dump(): Promise<Dump & { raw: Buffer }> {
  const hex = await rpc.call<string>('anvil_dumpState');
  const gz = Buffer.from(hex.slice(2), 'hex');
  const raw = gunzipSync(gz);
  const state = JSON.parse(raw.toString('utf8')) as { best_block_number: number; transactions: { info: { traces: unknown[] } }[] };
  for (const tx of state.transactions) tx.info.traces = [];
  const noTraces = JSON.stringify(state);
  return { block: state.best_block_number, txs: state.transactions.length, json: raw.length, gz: gz.length, gzNoTraces: gzipSync(noTraces).length, jsonNoTraces: noTraces.length, raw };
}

const userOpTopic = encodeEventTopics({ abi: entryPoint07Abi, eventName: 'UserOperationEvent' })[0]!;
async function operationsBetween(from: number, to: number): Promise<number> {
  const logs = await rpc.call<unknown[]>('eth_getLogs', [{ topics: [userOpTopic], fromBlock: `0x${from.toString(16)}`, toBlock: `0x${to.toString(16)}` }]);
  return logs.length;
}

const kb = (bytes: number) => `${(bytes / 1024).toFixed(2)} KiB`;
let last = await dump();
console.log(`after deployment: block ${last.block}, ${last.txs} transactions; anvil --state file ${kb(last.json)}, snapshot ${kb(last.gz)}`);

async function phase(label: string, run: () => Promise<unknown>): Promise<void> {
  const statsBefore = devnet.snapshotStats()[CHAIN];
  await run();
  await devnet.flushSnapshots();
  const stats = devnet.snapshotStats()[CHAIN];
  const now = await dump();
  const txs = now.txs - last.txs;
  const ops = await operationsBetween(last.block + 1, now.block);
  const per = (k: keyof Dump) => kb((now[k] - last[k]) / txs);
  console.log(
    `${label}: ${txs} transactions${ops ? `, ${ops} UserOperations (${(ops / txs).toFixed(1)} per transaction)` : ''}; per transaction: ` +
      `anvil --state file ${per('json')} (${per('jsonNoTraces')} without call traces), ` +
      `snapshot ${per('gz')} while running, ${per('gzNoTraces')} after a restart`,
  );
  console.log(
    `  whole chain now: --state file ${kb(now.json)}, snapshot ${kb(now.gz)}; snapshots written in the phase: ${stats.writes - statsBefore.writes}, ` +
      `${Math.round(stats.totalMs - statsBefore.totalMs)} ms in all, the last one ${Math.round(stats.lastMs)} ms (anvil_dumpState ${Math.round(stats.lastDumpMs)} ms)`,
  );
  last = now;
}

await phase(`lone operations (${LONE_OPS} sequential requests)`, () => load.latency(LONE_OPS));
await phase(`bundles under load (30 agents × 8 in flight over 3 chains, ${LOAD_SECONDS} s)`, () => load.throughput(30, 8, LOAD_SECONDS));
const c = chainOf(devnet);
const sender = devnetWalletClient(devnetChain({ chainId: c.chainId, name: c.name, rpcUrl: c.rpcUrl }), devnet.manifest.accounts.funded[0]!.privateKey);
await phase(`plain transfers (${TRANSFERS})`, async () => {
  for (let i = 0; i < TRANSFERS; i++) await sender.sendTransactionSync({ to: devnet.manifest.accounts.funded[1]!.address, value: 1n });
});
load.close();
await service.stop();

const oldStyle = last.raw;
rpc.close();
await devnet.stop();
console.log(`snapshot on disk: ${kb(statSync(files.current).size)} for ${last.txs} transactions`);

const restartStarted = performance.now();
devnet = await startDevnet({ dataDir, log: () => undefined });
console.log(`restart (load, verify): ${Math.round(performance.now() - restartStarted)} ms`);
rpc = nodeRpc(chainOf(devnet).rpcUrl);
const afterRestart = await dump();
console.log(`after the restart: block ${afterRestart.block}, snapshot ${kb(afterRestart.gz)} (${kb(afterRestart.gz / afterRestart.txs)} per transaction), its JSON ${kb(afterRestart.json)}`);
const timed = performance.now();
await rpc.call('anvil_mine', ['0x1']);
await devnet.flushSnapshots();
const restarted = devnet.snapshotStats()[CHAIN];
console.log(`one snapshot of the restarted chain: ${kb(restarted.lastBytes)} in ${Math.round(restarted.lastMs)} ms (anvil_dumpState ${Math.round(restarted.lastDumpMs)} ms; flush call ${Math.round(performance.now() - timed)} ms)`);

// Idle cost: the devnet's head checks against anvil's own `--state <file> --state-interval 1`, same state.
const cpuSeconds = (pid: number) => {
  const fields = readFileSync(`/proc/${pid}/stat`, 'utf8').split(') ')[1]!.split(' ');
  return (Number(fields[11]) + Number(fields[12])) / 100; // utime + stime, in clock ticks of 10 ms
};
const anvilPid = Number(readFileSync(join(dataDir, 'devnet', `${CHAIN}.pid`), 'utf8'));
const idleStart = { node: process.cpuUsage(), anvil: cpuSeconds(anvilPid), polls: devnet.snapshotStats()[CHAIN].polls, writes: devnet.snapshotStats()[CHAIN].writes };
await new Promise((r) => setTimeout(r, IDLE_SECONDS * 1000));
const nodeCpu = process.cpuUsage(idleStart.node);
const s = devnet.snapshotStats()[CHAIN];
console.log(
  `idle ${IDLE_SECONDS} s, devnet: ${s.polls - idleStart.polls} head checks, ${s.writes - idleStart.writes} snapshots; ` +
    `anvil ${(((cpuSeconds(anvilPid) - idleStart.anvil) / IDLE_SECONDS) * 100).toFixed(1)}% of a core, ` +
    `this process (three chains' checks) ${(((nodeCpu.user + nodeCpu.system) / 1e6 / IDLE_SECONDS) * 100).toFixed(1)}%`,
);
rpc.close();
await devnet.stop();

const legacyState = join(dataDir, 'legacy-state.json');
writeFileSync(legacyState, oldStyle);
const port = await findFreePort();
const legacy = spawn(resolveAnvilBinary(), ['--port', String(port), '--quiet', '--state', legacyState, '--state-interval', '1'], { stdio: 'ignore' });
await new Promise((r) => setTimeout(r, 3000)); // loaded
const legacyStart = cpuSeconds(legacy.pid!);
await new Promise((r) => setTimeout(r, IDLE_SECONDS * 1000));
console.log(
  `idle ${IDLE_SECONDS} s, anvil --state-interval 1 on the same state (${kb(oldStyle.length)}): ` +
    `${(((cpuSeconds(legacy.pid!) - legacyStart) / IDLE_SECONDS) * 100).toFixed(1)}% of a core`,
);
legacy.kill('SIGKILL');
rmSync(dataDir, { recursive: true, force: true });
