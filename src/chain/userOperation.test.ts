import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { recoverMessageAddress, type Hex } from 'viem';
import { privateKeyToAccount } from 'viem/accounts';
import { entryPoint07Abi, verifyingPaymasterAbi } from './abi.ts';
import { getSponsorshipHash, parseSponsorshipWindow } from './paymaster.ts';
import { chainUnderTest, freshSecret, incrementCall, uniqueId } from '../../test/support/chainUnderTest.ts';
import { fromSignedUserOperation, packUserOperation, verifySubmittedOperation } from './userOperation.ts';
import { createChainWorker, type LocalChainWorker } from './worker/index.ts';
import { deriveOwnerAccount } from './ownerKey.ts';
import { isChainError } from './errors.ts';

describe('signed UserOperations (devnet)', () => {
  const env = chainUnderTest();
  const secret = freshSecret();
  let worker: LocalChainWorker;

  beforeAll(async () => {
    worker = await createChainWorker(env.config, { serviceSecret: secret });
  });
  afterAll(() => worker?.close());

  for (const deployed of [false, true]) {
    it(`hash equals EntryPoint.getUserOpHash and the paymaster hash equals VerifyingPaymaster.getHash (${deployed ? 'later' : 'first'} operation)`, async () => {
      const ref = { apiClient: 'acme', agentId: uniqueId('hash') };
      if (deployed) {
        // Deploy the wallet by including a first operation.
        const first = await worker.prepareOperation(ref, [incrementCall(env.counter)], { requestId: 'deploy' });
        await worker.submitOperation(first);
        for (let i = 0; i < 200 && !(await worker.resolveWallet(ref)).deployed; i++) await new Promise((r) => setTimeout(r, 25));
      }
      const signed = await worker.prepareOperation(ref, [incrementCall(env.counter)], { requestId: 'r' });
      expect(signed.factory !== undefined).toBe(!deployed);
      const op = fromSignedUserOperation(signed);
      const packed = packUserOperation(op);

      const onChainHash = await env.client.readContract({
        address: env.config.entryPoint,
        abi: entryPoint07Abi,
        functionName: 'getUserOpHash',
        args: [packed],
      });
      expect(signed.hash).toBe(onChainHash);

      const window = parseSponsorshipWindow(op.paymasterData)!;
      expect(window.validAfter).toBe(0);
      expect(window.validUntil).toBeGreaterThan(Date.now() / 1000 + env.config.bundler.sponsorshipTtlSeconds - 10);
      const contractHash = await env.client.readContract({
        address: env.config.paymaster,
        abi: verifyingPaymasterAbi,
        functionName: 'getHash',
        args: [packed, window.validUntil, window.validAfter],
      });
      const ours = getSponsorshipHash({ userOperation: op, chainId: env.config.chainId, paymaster: env.config.paymaster, window });
      expect(ours).toBe(contractHash);

      // The paymaster signature is the verifying signer's, over that hash as an Ethereum signed message.
      const pmSignature = `0x${op.paymasterData!.slice(2 + 128)}` as Hex;
      expect(await recoverMessageAddress({ message: { raw: contractHash }, signature: pmSignature })).toBe(
        privateKeyToAccount(env.config.paymasterSignerKey!).address,
      );
      // The owner signature is the client's derived key, over the userOpHash as an Ethereum signed message.
      expect(await recoverMessageAddress({ message: { raw: onChainHash }, signature: op.signature })).toBe(deriveOwnerAccount(secret, 'acme').address);
    });
  }

  it('refuses a submitted operation whose hash does not match its fields, or for another chain', async () => {
    const signed = await worker.prepareOperation({ apiClient: 'acme', agentId: uniqueId('tamper') }, [incrementCall(env.counter)], { requestId: 'r' });
    const tampered = { ...signed, callGasLimit: (BigInt(signed.callGasLimit) + 1n).toString() };
    expect(() => verifySubmittedOperation(tampered, { entryPoint: env.config.entryPoint, chainId: env.config.chainId })).toThrow(/does not match/);
    await expect(worker.submitOperation(tampered)).rejects.toSatisfy((e) => isChainError(e, 'invalid_operation'));
    await expect(worker.submitOperation({ ...signed, chainId: 1 })).rejects.toSatisfy((e) => isChainError(e, 'invalid_operation'));
  });
});
