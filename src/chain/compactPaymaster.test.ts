import { beforeAll, describe, expect, it } from 'vitest';
import { concat, encodeDeployData, encodeFunctionData, getContractAddress, numberToHex, parseEther, slice, type Abi, type Address, type Hex } from 'viem';
import { generatePrivateKey, privateKeyToAccount, type PrivateKeyAccount } from 'viem/accounts';
import compactArtifact from '../devnet/artifacts/CompactVerifyingPaymaster.json' with { type: 'json' };
import { chainUnderTest, freshSecret, incrementCall, uniqueId } from '../../test/support/chainUnderTest.ts';
import { simpleAccountFactoryAbi } from './abi.ts';
import { encodeHandleOps, simulateBundle } from './bundler/bundleSimulation.ts';
import { encodeWalletCallData, toWalletCalls } from './calls.ts';
import { GAS, handleOpsGasLimit, type OperationGasLimits } from './gas.ts';
import { deriveOwnerAccount, walletSalt } from './ownerKey.ts';
import { getSponsorshipHash, signCompactSponsorship, type SponsorshipWindow } from './paymaster.ts';
import { encodeFactoryData, packUserOperation, signAsOwner, fromSignedUserOperation, type UserOperation07 } from './userOperation.ts';

const abi = compactArtifact.abi as Abi;

/**
 * contracts/CompactVerifyingPaymaster.sol against the EntryPoint on the run's devnet, with a paymaster and keys of
 * its own (the devnet's stays untouched): what it accepts and refuses, through handleOps simulations (eth_call).
 */
describe('CompactVerifyingPaymaster (devnet)', () => {
  const env = chainUnderTest();
  const ownerKey = generatePrivateKey();
  const deployer = privateKeyToAccount(ownerKey);
  const signer = privateKeyToAccount(generatePrivateKey());
  const executor = privateKeyToAccount(env.config.executorKeys[0]!).address;
  const walletOwner = deriveOwnerAccount(freshSecret(), 'acme');
  let paymaster: Address;

  async function send(account: PrivateKeyAccount, tx: { to?: Address; data: Hex; value?: bigint }) {
    const nonce = await env.client.getTransactionCount({ address: account.address, blockTag: 'pending' });
    const fees = await env.client.estimateFeesPerGas();
    const raw = await account.signTransaction({ type: 'eip1559', chainId: env.config.chainId, nonce, gas: 3_000_000n, ...fees, ...tx });
    return env.client.waitForTransactionReceipt({ hash: await env.client.sendRawTransaction({ serializedTransaction: raw }), pollingInterval: 20 });
  }

  beforeAll(async () => {
    await env.client.request({ method: 'anvil_setBalance' as never, params: [deployer.address, numberToHex(parseEther('10'))] as never });
    paymaster = getContractAddress({ from: deployer.address, nonce: 0n });
    const data = encodeDeployData({ abi, bytecode: compactArtifact.bytecode as Hex, args: [env.config.entryPoint, signer.address] });
    expect((await send(deployer, { data })).status).toBe('success');
    expect((await send(deployer, { to: paymaster, data: encodeFunctionData({ abi, functionName: 'deposit' }), value: parseEther('1') })).status).toBe('success');
  });

  /** A wallet's first operation (it deploys the wallet) sponsored by the compact paymaster, signed by both. */
  async function operation(o: { window?: SponsorshipWindow; by?: PrivateKeyAccount; paymasterData?: (signed: Hex) => Hex } = {}) {
    const salt = walletSalt(uniqueId('compact'));
    const sender = await env.client.readContract({ address: env.config.simpleAccountFactory, abi: simpleAccountFactoryAbi, functionName: 'getAddress', args: [walletOwner.address, salt] });
    const gas: OperationGasLimits = {
      callGasLimit: 100_000n,
      verificationGasLimit: GAS.verificationWithDeployment,
      preVerificationGas: 50_000n,
      paymasterVerificationGasLimit: GAS.paymasterVerification,
      paymasterPostOpGasLimit: 0n,
    };
    const op: UserOperation07 = {
      sender,
      nonce: 0n,
      factory: env.config.simpleAccountFactory,
      factoryData: encodeFactoryData(walletOwner.address, salt),
      callData: encodeWalletCallData(toWalletCalls([incrementCall(env.counter)])),
      ...gas,
      maxFeePerGas: 10n ** 9n,
      maxPriorityFeePerGas: 10n ** 9n,
      paymaster,
      signature: '0x',
    };
    const window = o.window ?? { validUntil: Math.floor(Date.now() / 1000) + 600, validAfter: 0 };
    const signed = await signCompactSponsorship({ userOperation: op, chainId: env.config.chainId, paymaster, window, signer: o.by ?? signer });
    op.paymasterData = o.paymasterData ? o.paymasterData(signed) : signed;
    const full = fromSignedUserOperation(await signAsOwner(op, { owner: walletOwner, entryPoint: env.config.entryPoint, chainId: env.config.chainId }));
    return { op: full, gas, window };
  }

  async function simulate(o: Awaited<ReturnType<typeof operation>>) {
    const data = encodeHandleOps([packUserOperation(o.op)], env.config.beneficiary);
    return simulateBundle(env.client, { entryPoint: env.config.entryPoint, from: executor, data, gas: handleOpsGasLimit([o.gas]) });
  }

  it('signs the reference getHash: the contract computes the same hash, and the EntryPoint accepts the operation', async () => {
    const o = await operation();
    expect(o.op.paymasterData!.length).toBe(2 + 2 * 76);
    const packed = packUserOperation(o.op);
    const onChain = await env.client.readContract({ address: paymaster, abi, functionName: 'getHash', args: [packed, o.window.validUntil, o.window.validAfter] });
    expect(getSponsorshipHash({ userOperation: o.op, chainId: env.config.chainId, paymaster, window: o.window })).toBe(onChain);
    expect(await simulate(o)).toEqual({ kind: 'ok' });
  });

  it('refuses another signer, a changed window, an unrecoverable signature (AA34) and an expired window (AA32)', async () => {
    const other = privateKeyToAccount(generatePrivateKey());
    expect(await simulate(await operation({ by: other }))).toMatchObject({ kind: 'failedOp', reason: 'AA34 signature error' });
    // validUntil one second later than signed.
    const later = (d: Hex): Hex => concat([numberToHex(BigInt(slice(d, 0, 6)) + 1n, { size: 6 }), slice(d, 6)]);
    expect(await simulate(await operation({ paymasterData: later }))).toMatchObject({ kind: 'failedOp', reason: 'AA34 signature error' });
    // A signature ecrecover cannot recover (r = 0): address(0), never the signer.
    const noR = (d: Hex): Hex => concat([slice(d, 0, 12), `0x${'00'.repeat(32)}`, slice(d, 44)]);
    expect(await simulate(await operation({ paymasterData: noR }))).toMatchObject({ kind: 'failedOp', reason: 'AA34 signature error' });
    const expired = { validUntil: Math.floor(Date.now() / 1000) - 60, validAfter: 0 };
    expect(await simulate(await operation({ window: expired }))).toMatchObject({ kind: 'failedOp', reason: 'AA32 paymaster expired or not due' });
  });

  it('refuses paymasterData of another length (AA33), a caller other than the EntryPoint, and a non-owner withdrawal', async () => {
    expect(await simulate(await operation({ paymasterData: (d) => concat([d, '0x1b']) }))).toMatchObject({ kind: 'failedOp', reason: 'AA33 reverted' });
    const o = await operation();
    await expect(
      env.client.simulateContract({ account: executor, address: paymaster, abi, functionName: 'validatePaymasterUserOp', args: [packUserOperation(o.op), `0x${'00'.repeat(32)}`, 0n] }),
    ).rejects.toThrow(/Sender not EntryPoint/);
    await expect(
      env.client.simulateContract({ account: executor, address: paymaster, abi, functionName: 'withdrawTo', args: [executor, 1n] }),
    ).rejects.toThrow(/caller is not the owner/);
    expect(await env.client.readContract({ address: paymaster, abi, functionName: 'getDeposit' })).toBe(parseEther('1'));
  });
});
