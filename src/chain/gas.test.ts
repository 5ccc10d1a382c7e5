import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { bytesToHex, hexToBytes, type Address, type Hex } from 'viem';
import { privateKeyToAccount } from 'viem/accounts';
import { encodeHandleOps, simulateBundle } from './bundler/bundleSimulation.ts';
import { encodeWalletCallData, toWalletCalls } from './calls.ts';
import { callGasLimitFromEstimate, calldataGas, GAS, handleOpsGasLimit, walletFrameGas, type OperationGasLimits } from './gas.ts';
import { deriveOwnerAccount, walletSalt } from './ownerKey.ts';
import { assertIncluded, chainUnderTest, freshSecret, incrementCall, outcomeRecorder, uniqueId } from '../../test/support/chainUnderTest.ts';
import { buildSignedOperation, fromSignedUserOperation, packUserOperation } from './userOperation.ts';
import { createChainWorker, type LocalChainWorker } from './worker/index.ts';

/**
 * The fixed validation limits in GAS must leave headroom over what validation really takes. Measured here by
 * bisection: the smallest limit with which the EntryPoint accepts the operation (eth_call of handleOps).
 */
describe('gas limits (devnet)', () => {
  const env = chainUnderTest();
  const secret = freshSecret();
  let worker: LocalChainWorker;
  const executor = privateKeyToAccount(env.config.executorKeys[0]!).address;

  beforeAll(async () => {
    worker = await createChainWorker(env.config, { serviceSecret: secret });
  });
  afterAll(() => worker?.close());

  async function accepted(sender: Address, nonce: bigint, deploy: boolean, agentId: string, gas: OperationGasLimits): Promise<boolean> {
    const owner = deriveOwnerAccount(secret, 'acme');
    const signed = await buildSignedOperation({
      chainId: env.config.chainId,
      entryPoint: env.config.entryPoint,
      sender,
      nonce,
      ...(deploy && { deployment: { factory: env.config.simpleAccountFactory, owner: owner.address, salt: walletSalt(agentId) } }),
      callData: encodeWalletCallData(toWalletCalls([incrementCall(env.counter)])),
      gas,
      maxFeePerGas: 10n ** 9n,
      maxPriorityFeePerGas: 10n ** 9n,
      sponsorship: {
        paymaster: env.config.paymaster,
        signer: privateKeyToAccount(env.config.paymasterSignerKey!),
        window: { validUntil: Math.floor(Date.now() / 1000) + 600, validAfter: 0 },
      },
      owner,
    });
    const data = encodeHandleOps([packUserOperation(fromSignedUserOperation(signed))], env.config.beneficiary);
    const sim = await simulateBundle(env.client, { entryPoint: env.config.entryPoint, from: executor, data, gas: handleOpsGasLimit([gas]) });
    if (sim.kind === 'rpc') throw new Error(sim.message);
    return sim.kind === 'ok';
  }

  async function smallest(ok: (limit: bigint) => Promise<boolean>, hi: bigint): Promise<bigint> {
    let lo = 1_000n;
    expect(await ok(hi)).toBe(true);
    while (hi - lo > 500n) {
      const mid = (lo + hi) / 2n;
      if (await ok(mid)) hi = mid;
      else lo = mid;
    }
    return hi;
  }

  const base: OperationGasLimits = {
    callGasLimit: 100_000n,
    verificationGasLimit: GAS.verificationWithDeployment,
    preVerificationGas: 50_000n,
    paymasterVerificationGasLimit: GAS.paymasterVerification,
    paymasterPostOpGasLimit: 0n,
  };

  it('verification and paymaster limits have ≥ 1.5× headroom over the measured need', async () => {
    const agentId = uniqueId('gas');
    const { address } = await worker.resolveWallet({ apiClient: 'acme', agentId });

    const deployNeed = await smallest((v) => accepted(address, 0n, true, agentId, { ...base, verificationGasLimit: v }), 1_000_000n);
    const pmNeed = await smallest((v) => accepted(address, 0n, true, agentId, { ...base, paymasterVerificationGasLimit: v }), 200_000n);

    // Deploy the wallet, then measure a later operation's validation (nonce 1: a warm nonce slot is not assumed).
    const rec = outcomeRecorder(worker);
    const first = await worker.prepareOperation({ apiClient: 'acme', agentId }, [incrementCall(env.counter)], { requestId: 'deploy' });
    await worker.submitOperation(first);
    assertIncluded(await rec.wait(first.hash));
    const need = await smallest((v) => accepted(address, 1n, false, agentId, { ...base, verificationGasLimit: v }), 1_000_000n);

    console.info(`validation need: deployed ${need}, with deployment ${deployNeed}, paymaster ${pmNeed} (limits ${GAS.verification}/${GAS.verificationWithDeployment}/${GAS.paymasterVerification})`);
    expect(GAS.verification * 2n).toBeGreaterThanOrEqual(need * 3n);
    expect(GAS.verificationWithDeployment * 2n).toBeGreaterThanOrEqual(deployNeed * 3n);
    expect(GAS.paymasterVerification * 2n).toBeGreaterThanOrEqual(pmNeed * 3n);
  });

  it('counts calldata gas per byte (4 zero, 16 non-zero), on byte boundaries and in either case', () => {
    expect(calldataGas('0x')).toBe(0n);
    expect(calldataGas('0x1001')).toBe(32n); // "00" across two bytes is no zero byte
    expect(calldataGas('0xA000fF')).toBe(16n + 4n + 16n);
    const reference = (hex: Hex) => hexToBytes(hex).reduce((g, b) => g + (b === 0 ? 4n : 16n), 0n);
    for (let i = 0; i < 200; i++) {
      const bytes = Array.from({ length: i * 3 }, (_, j) => ((i * 31 + j * 7) % 5 === 0 ? 0 : (i + j) % 256));
      const hex = bytesToHex(new Uint8Array(bytes));
      expect(calldataGas(hex)).toBe(reference(hex));
    }
  });

  it('derives the wallet frame gas from an estimate by removing the intrinsic cost', () => {
    const data = '0x0000ff01' as const;
    expect(calldataGas(data)).toBe(4n + 4n + 16n + 16n);
    expect(walletFrameGas(21_040n + 5_000n, data)).toBe(5_000n);
    expect(walletFrameGas(100n, data)).toBe(0n);
  });

  it('gives handleOps more gas than the sum of its operations may use (AA95)', () => {
    const ops = [base, { ...base, callGasLimit: 1_000_000n }];
    const sum = ops.reduce((s, g) => s + g.callGasLimit + g.verificationGasLimit + g.paymasterVerificationGasLimit + g.preVerificationGas, 0n);
    expect(handleOpsGasLimit(ops)).toBeGreaterThan(sum);
  });

  it('leaves even a small call the headroom of a lending protocol accruing interest a second after its estimate (≥ 15k)', () => {
    const data = '0x' as const;
    for (const walletGas of [30_000n, 57_000n, 90_000n]) {
      const limit = callGasLimitFromEstimate(21_000n + walletGas, data, false);
      expect(limit - walletGas).toBeGreaterThanOrEqual(15_000n);
    }
  });
});
