/**
 * Micro benchmarks of the chain worker against a devnet: `npx vitest bench --run src/chain/bundler/bundler.bench.ts`.
 * Figures only, no assertions on time. Uses the run's devnet when test/globalSetup.ts started one, otherwise
 * starts its own in a temporary directory.
 */
import { afterAll, bench, describe } from 'vitest';
import { privateKeyToAccount } from 'viem/accounts';
import { encodeWalletCallData, toWalletCalls } from '../calls.ts';
import { bundlesSince } from './bundler.ts';
import { GAS } from '../gas.ts';
import { deriveOwnerAccount } from '../ownerKey.ts';
import { benchChain, freshSecret, incrementCall, outcomeRecorder, uniqueId } from '../../../test/support/chainUnderTest.ts';
import { buildSignedOperation } from '../userOperation.ts';
import { createChainWorker } from '../worker/index.ts';

const devnet = await benchChain('base');
const { config, counter } = devnet;

const secret = freshSecret();
const worker = await createChainWorker(config, { serviceSecret: secret });
const outcomes = outcomeRecorder(worker);
const inc = [incrementCall(counter)];
const wallets = (n: number, tag: string) => Array.from({ length: n }, (_, i) => ({ apiClient: 'bench', agentId: `${tag}-${i}` }));
const fleet = wallets(20, uniqueId('fleet'));
const solo = { apiClient: 'bench', agentId: uniqueId('solo') };
const latencies: number[] = [];

async function run(refs: readonly { apiClient: string; agentId: string }[]): Promise<void> {
  const ops = await Promise.all(refs.map((ref, i) => worker.prepareOperation(ref, inc, { requestId: `b${i}` })));
  const t = performance.now();
  await Promise.all(ops.map((op) => worker.submitOperation(op)));
  await Promise.all(ops.map((op) => outcomes.wait(op.hash)));
  latencies.push(performance.now() - t);
}

// Deploy the wallets first: the figures below are for warm wallets.
await run(fleet);
await run([solo]);
const statsBefore = structuredClone(worker.bundlerStats());

afterAll(async () => {
  const s = worker.bundlerStats();
  const bundles = s.bundles - statsBefore.bundles;
  const ops = s.includedOps - statsBefore.includedOps;
  const big = bundlesSince(s.bySize, statsBefore.bySize).filter((b) => b.size >= 10);
  const bigOps = big.reduce((a, b) => a + b.size * b.bundles, 0);
  const bigGas = big.reduce((a, b) => a + b.gasUsed, 0n);
  const sorted = [...latencies].sort((a, b) => a - b);
  console.info(
    [
      `bundles ${bundles}, ops ${ops}, mean ${(ops / Math.max(bundles, 1)).toFixed(1)} ops/bundle`,
      `gas per op in bundles of ≥ 10: ${bigOps ? (bigGas / BigInt(bigOps)).toString() : 'n/a'}`,
      `submit → all outcomes: p50 ${sorted[sorted.length >> 1]?.toFixed(1)} ms, max ${sorted.at(-1)?.toFixed(1)} ms`,
    ].join('\n'),
  );
  await worker.close();
  await devnet.stop();
});

describe('chain worker', () => {
  const owner = deriveOwnerAccount(secret, 'bench');
  const signer = privateKeyToAccount(config.paymasterSignerKey!);
  const callData = encodeWalletCallData(toWalletCalls(inc));
  let nonce = 0n;
  bench('build + sign one operation (paymaster and owner signatures), no RPC', async () => {
    await buildSignedOperation({
      chainId: config.chainId,
      entryPoint: config.entryPoint,
      sender: owner.address,
      nonce: nonce++,
      callData,
      gas: { callGasLimit: 60_000n, verificationGasLimit: GAS.verification, preVerificationGas: 20_000n, paymasterVerificationGasLimit: GAS.paymasterVerification, paymasterPostOpGasLimit: 0n },
      maxFeePerGas: 3n * 10n ** 9n,
      maxPriorityFeePerGas: 10n ** 9n,
      sponsorship: { paymaster: config.paymaster, signer, window: { validUntil: 2_000_000_000, validAfter: 0 } },
      owner,
    });
  });

  bench('1 operation: prepare → submit → included (ops/s = hz)', () => run([solo]), { iterations: 30, time: 0 });
  bench('20 operations of 20 wallets → included (ops/s = 20 × hz)', () => run(fleet), { iterations: 15, time: 0 });
  bench('20 operations of one wallet → included (ops/s = 20 × hz)', () => run(Array(20).fill(solo)), { iterations: 15, time: 0 });
});
