import { concat, getAddress, type Address, type Hex } from 'viem';
import { privateKeyToAccount } from 'viem/accounts';
import type { Call, SignedUserOperation } from '../api/v1alpha1/index.ts';
import type { ChainConfig } from '../config/chainConfig.ts';
import { err, ok, type Result } from '../lib/result.ts';
import { createMemoryLockManager } from '../locks/memory.ts';
import { isLockError, type LockManager } from '../locks/types.ts';
import { entryPoint07Abi } from './abi.ts';
import { Bundler, type BundleObserver, type BundlerStats } from './bundler/bundler.ts';
import { lookupOperationOnChain, type LogScanOptions } from './bundler/outcomeLookup.ts';
import { toWalletCalls, type WalletCall } from './calls.ts';
import { createChainClient, type ChainClient } from './client.ts';
import { ChainError } from './errors.ts';
import { createFeeReader } from './fees.ts';
import { GAS, preVerificationGasFor, totalOperationGas, type OperationGasLimits } from './gas.ts';
import { silentLogger, type ChainLogger } from './logger.ts';
import { NonceAllocator } from './nonceAllocator.ts';
import { DUMMY_SIGNATURE, encodeSponsorshipWindow, parseSponsorshipWindow } from './paymaster.ts';
import { describeError } from './revert.ts';
import { simulateCalls, type CallsSimulation } from './simulate.ts';
import type { ChainWorker, OperationOutcome, PrepareOptions, SimulationFailure, SimulationResult, WalletRef } from './types.ts';
import { buildSignedOperation, encodeFactoryData, packUserOperation, verifySubmittedOperation } from './userOperation.ts';
import { createWalletResolver, type ResolvedWallet } from './wallet.ts';

export interface ChainWorkerDeps {
  /** Root of every owner key (see ownerKey.ts). A string is used as UTF-8 bytes. At least 16 bytes. */
  serviceSecret: Uint8Array | string;
  /** Per-wallet nonce lock; in-process by default. */
  locks?: LockManager;
  log?: ChainLogger;
  /** How far back getOperationOutcome looks for an operation it does not hold. */
  logScan?: LogScanOptions;
  /** Outcomes kept in memory (default 10 000). */
  recentOutcomes?: number;
  /** Fees are re-read from the latest block at most this often (default 1000 ms). */
  feeMaxAgeMs?: number;
  /** A simulation's call-gas estimate is reused by prepareOperation for this long (default 5000 ms). */
  estimateReuseMs?: number;
  /** Receipt wait of one bundle transaction (default 120 s). */
  receiptTimeoutMs?: number;
  /**
   * Refuse prepareOperation (code not_restored) until restoreInFlight has been called once. A worker in its
   * own process (cluster) sets this: after a restart it no longer knows the signed operations the controller
   * holds, and would reuse their nonces. In one process the controller restores before anything runs.
   */
  requireRestore?: boolean;
  /** Told of every bundle sent (metrics). */
  bundleObserver?: BundleObserver;
}

/** The in-process chain worker, with the bundler's figures for benchmarks and diagnostics. */
export interface LocalChainWorker extends ChainWorker {
  readonly client: ChainClient;
  bundlerStats(): Readonly<BundlerStats>;
}

/** Renewed while held (see LockManager); bounds how long a crashed worker blocks a wallet's next nonce. */
const NONCE_LOCK_TTL_MS = 10_000;

/**
 * The chain worker of one chain: resolves wallets, simulates calls, builds and signs sponsored v0.7
 * UserOperations with sequential nonces, and bundles them itself (see bundler/bundler.ts).
 *
 * @example
 * const worker = await createChainWorker(config, { serviceSecret: process.env.SERVICE_SECRET! });
 * const sim = await worker.simulate({ apiClient: 'acme', agentId: 'bot-1' }, calls);
 * const op = await worker.prepareOperation(ref, calls, { requestId }); // persist it, then:
 * await worker.submitOperation(op);
 */
export async function createChainWorker(inputConfig: ChainConfig, deps: ChainWorkerDeps): Promise<LocalChainWorker> {
  const config = normalizeAddresses(inputConfig);
  const log = deps.log ?? silentLogger;
  const locks = deps.locks ?? createMemoryLockManager();
  const client = createChainClient(config);
  const wallets = createWalletResolver(client, config, deps.serviceSecret);
  const paymasterSigner = privateKeyToAccount(config.paymasterSignerKey);
  const fees = createFeeReader(client, deps.feeMaxAgeMs ?? 1_000);
  const nonces = new NonceAllocator();
  const estimateReuseMs = deps.estimateReuseMs ?? 5_000;
  const estimates = new Map<string, { at: number; sim: CallsSimulation }>();
  let restored = deps.requireRestore !== true;
  // Operations signed but not yet submitted, by (request, wallet, calls): a prepare retried for the same request (the caller
  // crashed or timed out before persisting the first answer) gets the same operation instead of a second
  // nonce, which would leave a hole no later operation of the wallet could pass.
  const prepared = new Map<string, { op: SignedUserOperation; validUntil: number }>();
  const preparedByHash = new Map<string, string>();
  const forgetPrepared = (hash: string) => {
    const key = preparedByHash.get(hash.toLowerCase());
    if (key === undefined) return;
    preparedByHash.delete(hash.toLowerCase());
    prepared.delete(key);
  };
  const rememberPrepared = (key: string, op: SignedUserOperation, validUntil: number) => {
    if (prepared.size >= 10_000) {
      const now = Math.floor(Date.now() / 1000);
      for (const p of [...prepared.values()]) if (p.validUntil <= now) forgetPrepared(p.op.hash);
    }
    prepared.set(key, { op, validUntil });
    preparedByHash.set(op.hash.toLowerCase(), key);
  };

  // Fail fast on a wrong RPC URL or chain id rather than on the first request.
  const actualChainId = await client.getChainId().catch((e: unknown) => {
    throw new ChainError('rpc_unavailable', `${config.name}: ${rpcOrigin(config.rpcUrl)} did not answer: ${describeError(e)}`, { cause: e });
  });
  if (actualChainId !== config.chainId) {
    throw new ChainError('invalid_operation', `${config.name}: ${rpcOrigin(config.rpcUrl)} serves chain ${actualChainId}, configured ${config.chainId}`);
  }

  const bundler = new Bundler({
    client,
    chain: config.name,
    chainId: config.chainId,
    entryPoint: config.entryPoint,
    beneficiary: config.beneficiary,
    executorKeys: config.executorKeys,
    maxOpsPerBundle: config.bundler.maxOpsPerBundle,
    maxWaitMs: config.bundler.maxWaitMs,
    maxBusyWaitMs: config.bundler.maxBusyWaitMs,
    syncSend: config.bundler.syncSend,
    receiptPollMs: config.bundler.receiptPollMs,
    locks,
    log,
    onDropped: (e) => nonces.release(e.sender, e.nonce, e.hash),
    onIncluded: (e) => nonces.included(e.sender, e.nonce),
    ...(deps.logScan && { logScan: deps.logScan }),
    ...(deps.recentOutcomes !== undefined && { recentOutcomes: deps.recentOutcomes }),
    ...(deps.receiptTimeoutMs !== undefined && { receiptTimeoutMs: deps.receiptTimeoutMs }),
    ...(deps.bundleObserver && { observer: deps.bundleObserver }),
  });
  let closed = false;
  const assertOpen = () => {
    if (closed) throw new ChainError('closed', `${config.name} chain worker is closed`);
  };

  const estimateKey = (sender: Address, calls: readonly WalletCall[]) =>
    `${sender}|${calls.map((c) => `${c.target}:${c.value}:${c.data}`).join('|')}`;

  async function estimateCalls(wallet: ResolvedWallet, calls: readonly WalletCall[]): Promise<Result<CallsSimulation, SimulationFailure>> {
    const r = await simulateCalls(client, {
      entryPoint: config.entryPoint,
      sender: wallet.address,
      deployed: wallet.deployed,
      implementationCode: () => wallets.implementationCode(),
      calls,
    });
    if (r.ok) {
      const key = estimateKey(wallet.address, calls);
      estimates.set(key, { at: Date.now(), sim: r.value });
      if (estimates.size > 10_000) estimates.delete(estimates.keys().next().value as string);
    }
    return r;
  }

  /** Gas limits of the operation that would carry `sim`: fixed validation limits, PVG from its packed size. */
  function gasLimits(p: { wallet: ResolvedWallet; sim: CallsSimulation; deploying: boolean; nonce: bigint; maxFeePerGas: bigint }): OperationGasLimits {
    const gas: OperationGasLimits = {
      callGasLimit: p.sim.callGasLimit,
      verificationGasLimit: p.deploying ? GAS.verificationWithDeployment : GAS.verification,
      preVerificationGas: 0n,
      paymasterVerificationGasLimit: GAS.paymasterVerification,
      paymasterPostOpGasLimit: GAS.paymasterPostOp,
    };
    const packed = packUserOperation({
      sender: p.wallet.address,
      nonce: p.nonce,
      ...(p.deploying && { factory: config.simpleAccountFactory, factoryData: encodeFactoryData(p.wallet.owner.address, p.wallet.salt) }),
      callData: p.sim.callData,
      ...gas,
      preVerificationGas: 1_000_000n,
      maxFeePerGas: p.maxFeePerGas,
      maxPriorityFeePerGas: p.maxFeePerGas,
      paymaster: config.paymaster,
      paymasterData: concat([encodeSponsorshipWindow({ validUntil: 2 ** 40, validAfter: 0 }), DUMMY_SIGNATURE]),
      signature: DUMMY_SIGNATURE,
    });
    gas.preVerificationGas = preVerificationGasFor(packed);
    return gas;
  }

  const worker: LocalChainWorker = {
    chain: config.name,
    client,

    async resolveWallet(ref) {
      assertOpen();
      const w = await wallets.resolve(ref).catch(rpcError);
      return { address: w.address, deployed: w.deployed };
    },

    async getBalances(ref) {
      assertOpen();
      return wallets.balances(ref).catch(rpcError);
    },

    async simulate(ref, calls): Promise<Result<SimulationResult, SimulationFailure>> {
      assertOpen();
      const walletCalls = toWalletCalls(calls);
      let wallet: ResolvedWallet;
      let feeSnapshot;
      try {
        [wallet, feeSnapshot] = await Promise.all([wallets.resolve(ref), fees()]);
      } catch (e) {
        return err({ code: 'rpc_unavailable', message: `the chain did not answer: ${describeError(e)}` });
      }
      const r = await estimateCalls(wallet, walletCalls);
      if (!r.ok) return r;
      const gas = gasLimits({ wallet, sim: r.value, deploying: !wallet.deployed, nonce: 0n, maxFeePerGas: feeSnapshot.maxFeePerGas });
      const estimatedGas = totalOperationGas(gas);
      const estimatedCostWei = estimatedGas * feeSnapshot.maxFeePerGas;
      return ok({
        wallet: { address: wallet.address, deployed: wallet.deployed },
        estimatedGas,
        callGas: r.value.walletGas,
        maxFeePerGas: feeSnapshot.maxFeePerGas,
        estimatedCostWei,
        estimatedCostUsd: weiToUsd(estimatedCostWei, config.nativeUsdPrice),
      });
    },

    async prepareOperation(ref: WalletRef, calls: readonly Call[], opts: PrepareOptions): Promise<SignedUserOperation> {
      assertOpen();
      if (!restored) throw new ChainError('not_restored', `${config.name} chain worker has not been told the operations in flight yet`);
      const preparedKey = `${opts.requestId}\u0000${ref.apiClient}\u0000${ref.agentId}\u0000${JSON.stringify(calls)}`;
      const earlier = prepared.get(preparedKey);
      // Reused only while its sponsorship has a minute left; an older one is left to expire with its nonce.
      if (earlier && earlier.validUntil > Math.floor(Date.now() / 1000) + 60) return earlier.op;
      const walletCalls = toWalletCalls(calls);
      const [wallet, feeSnapshot] = await Promise.all([wallets.resolve(ref), fees()]).catch(rpcError);
      let sim: CallsSimulation;
      const cached = estimates.get(estimateKey(wallet.address, walletCalls));
      if (cached && Date.now() - cached.at <= estimateReuseMs) {
        sim = cached.sim;
      } else {
        const r = await estimateCalls(wallet, walletCalls);
        if (!r.ok) {
          throw new ChainError(r.error.code, r.error.message, {
            details: { requestId: opts.requestId, revertReason: r.error.revertReason, revertData: r.error.revertData },
          });
        }
        sim = r.value;
      }
      // The EntryPoint compares validUntil with block.timestamp: count from the chain's clock when it runs ahead.
      const now = Math.max(Math.floor(Date.now() / 1000), Number(feeSnapshot.blockTimestamp));
      const expiry = now + config.bundler.sponsorshipTtlSeconds;

      // No lock service, no nonce: to the caller this worker cannot serve now, as when its chain does not
      // answer (nothing was signed; admission retries, then fails with chain_unavailable).
      const lockUnavailable = (e: unknown): never => {
        if (isLockError(e, 'Unavailable')) throw new ChainError('rpc_unavailable', `${config.name}: ${e.message}`, { cause: e });
        throw e;
      };
      return locks.withLock(`nonce:${config.name}:${wallet.address.toLowerCase()}`, NONCE_LOCK_TTL_MS, async () => {
        const chainNonce = await client
          .readContract({ address: config.entryPoint, abi: entryPoint07Abi, functionName: 'getNonce', args: [wallet.address, 0n] })
          .catch(rpcError);
        const { nonce, validUntil } = nonces.allocate(wallet.address, chainNonce, expiry);
        try {
          // The factory goes only into nonce 0 of a wallet without code (anyone may deploy it through the factory).
          const deploying = nonce === 0n && !(await wallets.resolve(ref)).deployed;
          const gas = gasLimits({ wallet, sim, deploying, nonce, maxFeePerGas: feeSnapshot.maxFeePerGas });
          const op = await buildSignedOperation({
            chainId: config.chainId,
            entryPoint: config.entryPoint,
            sender: wallet.address,
            nonce,
            ...(deploying && { deployment: { factory: config.simpleAccountFactory, owner: wallet.owner.address, salt: wallet.salt } }),
            callData: sim.callData,
            gas,
            maxFeePerGas: feeSnapshot.maxFeePerGas,
            maxPriorityFeePerGas: feeSnapshot.maxPriorityFeePerGas,
            sponsorship: { paymaster: config.paymaster, signer: paymasterSigner, window: { validUntil, validAfter: 0 } },
            owner: wallet.owner,
          });
          nonces.reserve(wallet.address, nonce, op.hash as Hex, validUntil);
          rememberPrepared(preparedKey, op, validUntil);
          log.debug({ requestId: opts.requestId, sender: wallet.address, nonce: nonce.toString(), hash: op.hash }, 'operation signed');
          return op;
        } catch (e) {
          nonces.release(wallet.address, nonce);
          throw e;
        }
      }).catch(lockUnavailable);
    },

    async submitOperation(op) {
      assertOpen();
      const parsed = verifySubmittedOperation(op, { entryPoint: config.entryPoint, chainId: config.chainId });
      const result = bundler.submit(op, parsed);
      forgetPrepared(op.hash);
      if (result === 'accepted') {
        const window = parseSponsorshipWindow(parsed.paymasterData);
        nonces.reserve(parsed.sender, parsed.nonce, op.hash as Hex, window?.validUntil ?? Number.MAX_SAFE_INTEGER);
      }
    },

    async getOperationOutcome(op): Promise<OperationOutcome> {
      assertOpen();
      const known = bundler.outcomeOf(op.hash as Hex);
      if (known) return known;
      const outcome = await lookupOperationOnChain(client, {
        entryPoint: config.entryPoint,
        hash: op.hash as Hex,
        sender: op.sender as Address,
        nonce: BigInt(op.nonce),
        ...(deps.logScan && { scan: deps.logScan }),
      }).catch(rpcError);
      bundler.remember(op.hash as Hex, outcome);
      return outcome;
    },

    async restoreInFlight(ops) {
      for (const op of ops) {
        const window = parseSponsorshipWindow(op.paymasterData as Hex | undefined);
        nonces.reserve(op.sender as Address, BigInt(op.nonce), op.hash as Hex, window?.validUntil ?? Number.MAX_SAFE_INTEGER);
      }
      restored = true;
    },

    onOutcome(listener) {
      return bundler.onOutcome(listener);
    },

    bundlerStats() {
      return bundler.stats;
    },

    async close() {
      if (closed) return;
      closed = true;
      await bundler.close();
    },
  };
  return worker;
}

/** Checksums every address of the configuration (viem refuses a mixed-case address with a wrong checksum). */
function normalizeAddresses(c: ChainConfig): ChainConfig {
  const a = (x: Address) => getAddress(x.toLowerCase());
  return {
    ...c,
    entryPoint: a(c.entryPoint),
    simpleAccountFactory: a(c.simpleAccountFactory),
    paymaster: a(c.paymaster),
    beneficiary: a(c.beneficiary),
    treasury: a(c.treasury),
    tokens: c.tokens.map((t) => ({ ...t, address: a(t.address) })),
  };
}

/** Wei → USD at a configured price, rounded to micro-dollars. */
export function weiToUsd(wei: bigint, usdPerNative: number): number {
  const microUsd = (wei * BigInt(Math.round(usdPerNative * 1e6))) / 10n ** 18n;
  return Number(microUsd) / 1e6;
}

function rpcError(e: unknown): never {
  if (e instanceof ChainError) throw e;
  throw new ChainError('rpc_unavailable', `the chain did not answer: ${describeError(e)}`, { cause: e });
}

/** An RPC URL for messages: scheme and host only (providers put API keys in the path, query or userinfo). */
export function rpcOrigin(url: string): string {
  try {
    const u = new URL(url);
    return `${u.protocol}//${u.host}`;
  } catch {
    return '(unparsable RPC URL)';
  }
}
