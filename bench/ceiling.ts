/**
 * The chain's own ceiling for the operations the load sends: Counter.increment through warm SimpleAccount
 * wallets, sponsored by the VerifyingPaymaster, signed in advance and sent as full handleOps bundles straight
 * to the node from the chain's executor keys (one bundle in flight per key, as the bundler does). No service:
 * what is measured is what the node can include, so `service throughput / ceiling` reads the same on a slow
 * machine and a fast one, where an absolute figure does not.
 */
import { formatTransactionReceipt, type Address, type Hex, type TransactionReceipt } from 'viem';
import { privateKeyToAccount, type PrivateKeyAccount } from 'viem/accounts';
import { encodeHandleOps } from '../src/chain/bundler/bundleSimulation.ts';
import { outcomesFromLogs } from '../src/chain/bundler/receipt.ts';
import { encodeWalletCallData, toWalletCalls } from '../src/chain/calls.ts';
import { createChainClient, type ChainClient } from '../src/chain/client.ts';
import { readFees } from '../src/chain/fees.ts';
import { GAS, handleOpsGasLimit, preVerificationGasFor, type OperationGasLimits } from '../src/chain/gas.ts';
import { deriveOwnerAccount, walletSalt } from '../src/chain/ownerKey.ts';
import { DUMMY_SIGNATURE } from '../src/chain/paymaster.ts';
import { simulateCalls } from '../src/chain/simulate.ts';
import { buildSignedOperation, fromSignedUserOperation, packUserOperation } from '../src/chain/userOperation.ts';
import { simpleAccountFactoryAbi } from '../src/chain/abi.ts';
import { builtinBundlerOf, type ChainConfig } from '../src/config/chainConfig.ts';
import { counterAbi } from '../src/devnet/contracts.ts';
import { encodeFunctionData } from 'viem';

export interface CeilingOptions {
  /** Service secret the wallets' owner key is derived from (any: the wallets are the ceiling's own). */
  serviceSecret: string;
  /** Wallets per chain (the load's agents per chain). */
  walletsPerChain: number;
  /** Operations per chain in the measured window. */
  opsPerChain: number;
  /** A funded key per chain to deploy the wallets with (not an executor key: those send the bundles). */
  deployerKey: Hex;
}

export interface CeilingResult {
  /** Operations included with success in the window. */
  included: number;
  /** Operations sent. */
  sent: number;
  bundles: number;
  seconds: number;
  perSecond: number;
  /** Gas per operation (bundle transaction gas / operations). */
  gasPerOp: number;
}

interface PreparedChain {
  client: ChainClient;
  config: ChainConfig;
  /** Per executor: its bundle transactions, signed, in nonce order. */
  lanes: { executor: PrivateKeyAccount; txs: Hex[] }[];
  ops: number;
}

/**
 * Prepares every chain (deploys the wallets, signs every operation and every bundle transaction), then sends
 * all bundles of all chains at once and measures from the first send to the last receipt.
 */
export async function measureChainCeiling(chains: readonly { config: ChainConfig; counter: Address }[], opts: CeilingOptions): Promise<CeilingResult> {
  const prepared = await Promise.all(chains.map((c) => prepareChain(c.config, c.counter, opts)));
  let included = 0;
  let bundles = 0;
  let gas = 0n;
  const t0 = performance.now();
  await Promise.all(
    prepared.flatMap((p) =>
      p.lanes.map(async (lane) => {
        for (const tx of lane.txs) {
          const receipt = await sendAndWait(p.client, tx, builtinBundlerOf(p.config).syncSend);
          if (receipt.status !== 'success') throw new Error(`${p.config.name}: a ceiling bundle reverted (${receipt.transactionHash})`);
          bundles++;
          gas += receipt.gasUsed;
          for (const o of outcomesFromLogs(receipt.logs, p.config.entryPoint).values()) if (o.success) included++;
        }
      }),
    ),
  );
  const seconds = (performance.now() - t0) / 1000;
  const sent = prepared.reduce((a, p) => a + p.ops, 0);
  return { included, sent, bundles, seconds, perSecond: included / seconds, gasPerOp: sent ? Number(gas) / sent : 0 };
}

async function prepareChain(config: ChainConfig, counter: Address, opts: CeilingOptions): Promise<PreparedChain> {
  const client = createChainClient(config);
  const owner = deriveOwnerAccount(opts.serviceSecret, 'ceiling');
  const paymasterSigner = privateKeyToAccount(config.paymasterSignerKey!);
  const executors = config.executorKeys.map((k) => privateKeyToAccount(k));

  // Warm wallets, deployed through the factory directly (anyone may): the figure is for warm operations.
  const deployer = privateKeyToAccount(opts.deployerKey);
  const fees = await readFees(client);
  const wallets = await deployWarmWallets(client, config, deployer, owner.address, 'ceiling', opts.walletsPerChain);
  const { sim, calls } = await incrementCallGas(client, config, counter, wallets[0]!);
  const callData = encodeWalletCallData(calls);
  const gas = warmOperationGas({
    callGasLimit: sim.value.callGasLimit,
    sender: wallets[0]!,
    callData,
    maxFeePerGas: fees.maxFeePerGas,
    paymaster: config.paymaster,
    paymasterData: `0x${'00'.repeat(64)}${DUMMY_SIGNATURE.slice(2)}`,
  });


  // Wallet i belongs to executor i mod E: each wallet's operations travel in one lane, in nonce order, so
  // no bundle can arrive before the one holding the wallet's previous nonce.
  const perBundle = builtinBundlerOf(config).maxOpsPerBundle;
  const validUntil = Math.floor(Date.now() / 1000) + 3_600;
  const lanes: PreparedChain['lanes'] = [];
  let ops = 0;
  for (let e = 0; e < executors.length; e++) {
    const mine = wallets.filter((_, i) => i % executors.length === e);
    if (mine.length === 0) continue;
    const quota = Math.floor(opts.opsPerChain / executors.length);
    const queue: { sender: Address; nonce: bigint }[] = [];
    for (let k = 0; queue.length < quota; k++) for (const sender of mine) if (queue.length < quota) queue.push({ sender, nonce: BigInt(k) });
    const executor = executors[e]!;
    let txNonce = await client.getTransactionCount({ address: executor.address, blockTag: 'pending' });
    const txs: Hex[] = [];
    for (let i = 0; i < queue.length; i += perBundle) {
      const signed = await Promise.all(
        queue.slice(i, i + perBundle).map((q) =>
          buildSignedOperation({
            chainId: config.chainId,
            entryPoint: config.entryPoint,
            sender: q.sender,
            nonce: q.nonce,
            callData,
            gas,
            maxFeePerGas: fees.maxFeePerGas,
            maxPriorityFeePerGas: fees.maxPriorityFeePerGas,
            sponsorship: { paymaster: config.paymaster, signer: paymasterSigner, window: { validUntil, validAfter: 0 } },
            owner,
          }),
        ),
      );
      const packed = signed.map((s) => packUserOperation(fromSignedUserOperation(s)));
      txs.push(
        await executor.signTransaction({
          type: 'eip1559',
          chainId: config.chainId,
          nonce: txNonce++,
          to: config.entryPoint,
          data: encodeHandleOps(packed, config.beneficiary),
          gas: handleOpsGasLimit(signed.map(() => gas)),
          maxFeePerGas: fees.maxFeePerGas * 4n, // room for base-fee growth over the whole window
          maxPriorityFeePerGas: fees.maxPriorityFeePerGas,
        }),
      );
      ops += signed.length;
    }
    lanes.push({ executor, txs });
  }
  return { client, config, lanes, ops };
}

/** One raw transaction, sent as the bundler's executors send it (Sync when the node supports it). */
export async function sendAndWait(client: ChainClient, tx: Hex, syncSend: boolean): Promise<TransactionReceipt> {
  if (syncSend) {
    const raw = await client.request({ method: 'eth_sendRawTransactionSync', params: [tx] } as never, { retryCount: 0 });
    return formatTransactionReceipt(raw as never);
  }
  const hash = await client.sendRawTransaction({ serializedTransaction: tx });
  return client.waitForTransactionReceipt({ hash, pollingInterval: 5 });
}

/**
 * The gas limits the worker signs a deployed wallet's operation with: its call gas, the fixed validation limits,
 * and preVerificationGas from the packed size with paymaster data of its final size (`paymasterData`, a stub).
 */
export function warmOperationGas(p: { callGasLimit: bigint; sender: Address; callData: Hex; maxFeePerGas: bigint; paymaster: Address; paymasterData: Hex }): OperationGasLimits {
  const gas: OperationGasLimits = {
    callGasLimit: p.callGasLimit,
    verificationGasLimit: GAS.verification,
    preVerificationGas: 0n,
    paymasterVerificationGasLimit: GAS.paymasterVerification,
    paymasterPostOpGasLimit: GAS.paymasterPostOp,
  };
  gas.preVerificationGas = preVerificationGasFor(
    packUserOperation({
      sender: p.sender,
      nonce: 0n,
      callData: p.callData,
      ...gas,
      preVerificationGas: 1_000_000n,
      maxFeePerGas: p.maxFeePerGas,
      maxPriorityFeePerGas: p.maxFeePerGas,
      paymaster: p.paymaster,
      paymasterData: p.paymasterData,
      signature: DUMMY_SIGNATURE,
    }),
  );
  return gas;
}

/** `n` wallets of `owner` (salts `<tag>-<i>`), deployed through the factory directly (anyone may), in order. */
export async function deployWarmWallets(client: ChainClient, config: ChainConfig, deployer: PrivateKeyAccount, owner: Address, tag: string, n: number): Promise<Address[]> {
  const wallets: Address[] = [];
  const fees = await readFees(client);
  let deployerNonce = await client.getTransactionCount({ address: deployer.address, blockTag: 'pending' });
  for (let i = 0; i < n; i++) {
    const args = [owner, walletSalt(`${tag}-${i}`)] as const;
    wallets.push(await client.readContract({ address: config.simpleAccountFactory, abi: simpleAccountFactoryAbi, functionName: 'getAddress', args }));
    const tx = await deployer.signTransaction({
      type: 'eip1559',
      chainId: config.chainId,
      nonce: deployerNonce++,
      to: config.simpleAccountFactory,
      data: encodeFunctionData({ abi: simpleAccountFactoryAbi, functionName: 'createAccount', args }),
      gas: 500_000n,
      maxFeePerGas: fees.maxFeePerGas,
      maxPriorityFeePerGas: fees.maxPriorityFeePerGas,
    });
    const r = await sendAndWait(client, tx, builtinBundlerOf(config).syncSend);
    if (r.status !== 'success') throw new Error(`${config.name}: deploying ${tag} wallet ${i} failed`);
  }
  return wallets;
}

/** The call gas the worker would sign for Counter.increment from a deployed wallet, and the calls it carries. */
export async function incrementCallGas(client: ChainClient, config: ChainConfig, counter: Address, sender: Address) {
  const calls = toWalletCalls([{ target: counter, value: '0', data: encodeFunctionData({ abi: counterAbi, functionName: 'increment' }) }]);
  const sim = await simulateCalls(client, {
    entryPoint: config.entryPoint,
    sender,
    deployed: true,
    implementationCode: () => Promise.reject(new Error('deployed wallets need no code override')),
    calls,
  });
  if (!sim.ok) throw new Error(`${config.name}: simulating Counter.increment failed: ${sim.error.message}`);
  return { sim, calls };
}
