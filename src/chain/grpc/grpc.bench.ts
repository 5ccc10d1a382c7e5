/**
 * What the gRPC hop costs: the same worker called in process and through serveChainWorker/connectChainWorker
 * on loopback. `npx vitest bench --run src/chain/grpc/grpc.bench.ts` (uses the run's devnet, or starts one).
 * Figures only, no assertions on time.
 */
import { mkdtempSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, bench, describe } from 'vitest';
import type { ChainConfig } from '../../config/chainConfig.ts';
import { chainConfigsFromManifest, loadManifest, startDevnet, type Devnet } from '../../devnet/devnet.ts';
import { freshSecret, incrementCall, uniqueId } from '../testSupport.ts';
import type { ChainWorker, OperationOutcome } from '../types.ts';
import { createChainWorker } from '../worker.ts';
import { connectChainWorker } from './client.ts';
import { serveChainWorker } from './server.ts';

let devnet: Devnet | undefined;
let config: ChainConfig;
let counter: `0x${string}`;
const manifestPath = process.env.AGENT_WALLET_TEST_MANIFEST;
if (manifestPath) {
  const manifest = loadManifest(manifestPath);
  config = chainConfigsFromManifest(manifest).find((c) => c.name === 'base')!;
  counter = manifest.chains.find((c) => c.name === 'base')!.testContracts.counter;
} else {
  devnet = await startDevnet({ dataDir: mkdtempSync(join(tmpdir(), 'aw-bench-')), log: () => {} });
  config = devnet.chainConfigs().find((c) => c.name === 'base')!;
  counter = devnet.manifest.chains.find((c) => c.name === 'base')!.testContracts.counter;
}

const local = await createChainWorker(config, { serviceSecret: freshSecret() });
const server = await serveChainWorker(local, { port: 0 });
const remote = connectChainWorker('base', `127.0.0.1:${server.port}`);

/** Waits for pushed outcomes through the given worker's onOutcome (the stream, for the remote one). */
function waiter(worker: ChainWorker) {
  const seen = new Map<string, OperationOutcome>();
  const waiting = new Map<string, () => void>();
  worker.onOutcome((h, o) => {
    seen.set(h.toLowerCase(), o);
    waiting.get(h.toLowerCase())?.();
  });
  return (hash: string) => (seen.has(hash.toLowerCase()) ? Promise.resolve() : new Promise<void>((r) => waiting.set(hash.toLowerCase(), r)));
}
const waitLocal = waiter(local);
const waitRemote = waiter(remote);
await remote.watchReady();

const inc = [incrementCall(counter)];
const ref = { apiClient: 'bench', agentId: uniqueId('warm') };
const fleet = Array.from({ length: 20 }, (_, i) => ({ apiClient: 'bench', agentId: `${uniqueId('fleet')}-${i}` }));
let n = 0;
async function run(worker: ChainWorker, wait: (hash: string) => Promise<void>, refs: readonly { apiClient: string; agentId: string }[]) {
  const ops = await Promise.all(refs.map((r) => worker.prepareOperation(r, inc, { requestId: `b${n++}` })));
  await Promise.all(ops.map((op) => worker.submitOperation(op)));
  await Promise.all(ops.map((op) => wait(op.hash)));
}
// Warm wallets (deployed) and caches for both paths.
await run(local, waitLocal, [ref, ...fleet]);
await remote.resolveWallet(ref);

afterAll(async () => {
  await remote.close();
  await server.close(1_000);
  await local.close();
  await devnet?.stop();
});

describe('chain worker: in process vs gRPC (loopback)', () => {
  bench('resolveWallet (cached) in process', () => local.resolveWallet(ref).then(() => {}));
  bench('resolveWallet (cached) over gRPC', () => remote.resolveWallet(ref).then(() => {}));
  bench('getHead over gRPC (one eth_blockNumber behind it)', () => remote.getHead().then(() => {}));
  bench('1 operation prepare → included, in process', () => run(local, waitLocal, [ref]), { iterations: 30, time: 0 });
  bench('1 operation prepare → included, over gRPC (outcome pushed by stream)', () => run(remote, waitRemote, [ref]), { iterations: 30, time: 0 });
  bench('20 operations of 20 wallets, in process (ops/s = 20 × hz)', () => run(local, waitLocal, fleet), { iterations: 15, time: 0 });
  bench('20 operations of 20 wallets, over gRPC (ops/s = 20 × hz)', () => run(remote, waitRemote, fleet), { iterations: 15, time: 0 });
});
