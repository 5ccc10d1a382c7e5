/**
 * What the gRPC hop costs: the same worker called in process and through serveChainWorker/connectChainWorker
 * on loopback. `npx vitest bench --run src/chain/grpc/grpc.bench.ts` (uses the run's devnet, or starts one).
 * Figures only, no assertions on time.
 */
import { afterAll, bench, describe } from 'vitest';
import { benchChain, freshSecret, incrementCall, outcomeRecorder, uniqueId } from '../../../test/support/chainUnderTest.ts';
import type { ChainWorker } from '../types.ts';
import { createChainWorker } from '../worker/index.ts';
import { connectChainWorker } from './client.ts';
import { serveChainWorker } from './server.ts';

const devnet = await benchChain('base');
const { config, counter } = devnet;

const local = await createChainWorker(config, { serviceSecret: freshSecret() });
const server = await serveChainWorker(local, { port: 0 });
const remote = connectChainWorker('base', `127.0.0.1:${server.port}`);

// Outcomes through each worker's onOutcome (the stream, for the remote one).
const localOutcomes = outcomeRecorder(local);
const remoteOutcomes = outcomeRecorder(remote);
await remote.watchReady();

const inc = [incrementCall(counter)];
const ref = { apiClient: 'bench', agentId: uniqueId('warm') };
const fleet = Array.from({ length: 20 }, (_, i) => ({ apiClient: 'bench', agentId: `${uniqueId('fleet')}-${i}` }));
let n = 0;
async function run(worker: ChainWorker, outcomes: ReturnType<typeof outcomeRecorder>, refs: readonly { apiClient: string; agentId: string }[]) {
  const ops = await Promise.all(refs.map((r) => worker.prepareOperation(r, inc, { requestId: `b${n++}` })));
  await Promise.all(ops.map((op) => worker.submitOperation(op)));
  await Promise.all(ops.map((op) => outcomes.wait(op.hash)));
}
// Warm wallets (deployed) and caches for both paths.
await run(local, localOutcomes, [ref, ...fleet]);
await remote.resolveWallet(ref);

afterAll(async () => {
  await remote.close();
  await server.close(1_000);
  await local.close();
  await devnet.stop();
});

describe('chain worker: in process vs gRPC (loopback)', () => {
  bench('resolveWallet (cached) in process', () => local.resolveWallet(ref).then(() => {}));
  bench('resolveWallet (cached) over gRPC', () => remote.resolveWallet(ref).then(() => {}));
  bench('getHead over gRPC (one eth_blockNumber behind it)', () => remote.getHead().then(() => {}));
  bench('1 operation prepare → included, in process', () => run(local, localOutcomes, [ref]), { iterations: 30, time: 0 });
  bench('1 operation prepare → included, over gRPC (outcome pushed by stream)', () => run(remote, remoteOutcomes, [ref]), { iterations: 30, time: 0 });
  bench('20 operations of 20 wallets, in process (ops/s = 20 × hz)', () => run(local, localOutcomes, fleet), { iterations: 15, time: 0 });
  bench('20 operations of 20 wallets, over gRPC (ops/s = 20 × hz)', () => run(remote, remoteOutcomes, fleet), { iterations: 15, time: 0 });
});
