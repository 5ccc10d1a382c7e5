import { getAddress, type Address, type Hex } from 'viem';
import { privateKeyToAccount } from 'viem/accounts';
import { l1DataFeeOf, type ChainConfig } from '../../config/chainConfig.ts';
import { createMemoryLockManager } from '../../locks/memory.ts';
import type { LockManager } from '../../locks/types.ts';
import { Bundler, type BundleObserver, type BundlerStats } from '../bundler/bundler.ts';
import { createBundlerClient } from '../bundler/rpc/client.ts';
import { bundlerPreVerificationGas, withBundlerGasPrice } from '../bundler/rpc/gasAdvice.ts';
import { RpcBundler } from '../bundler/rpc/rpcBundler.ts';
import type { OperationBundler } from '../bundler/types.ts';
import type { LogScanOptions } from '../bundler/outcomeLookup.ts';
import { createChainClient, type ChainClient } from '../client.ts';
import { readEntryPointNonce } from '../entryPointNonce.ts';
import { ChainError, rethrowAsRpcUnavailable } from '../errors.ts';
import { isLockError } from '../../locks/types.ts';
import { createFeeReader } from '../fees.ts';
import { silentLogger, type Logger } from '../../lib/logger.ts';
import { NonceAllocator } from '../nonceAllocator.ts';
import { parseSponsorshipWindow } from '../paymaster.ts';
import { describeError } from '../revert.ts';
import type { ChainWorker, OperationOutcome, SendingAccounts } from '../types.ts';
import { fromSignedUserOperation, verifySubmittedOperation, type UserOperation07 } from '../userOperation.ts';
import { createWalletResolver } from '../wallet.ts';
import { createAccountSender } from './accountSender.ts';
import { createOperationEstimates } from './estimates.ts';
import { createOperationPreparer } from './prepare.ts';
import { createSponsor } from '../sponsor/index.ts';
import { PreparedOperations } from './preparedCache.ts';
import { createOperationOutcomes } from './outcomes.ts';
import { createNamedReads } from './namedReads.ts';
import { createChainReads } from './reads.ts';

export interface ChainWorkerDeps {
  /** Root of every owner key (see ownerKey.ts). A string is used as UTF-8 bytes. At least 16 bytes. */
  serviceSecret: Uint8Array | string;
  /** Per-wallet nonce lock; in-process by default. */
  locks?: LockManager;
  log?: Logger;
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
  /** Told each time one of the chain's RPC endpoints fails a call and the transport turns to another or backs off (metrics). */
  rpcEndpointFailed?: (chain: string, endpoint: string, reason: 'unreachable' | 'rateLimited') => void;
  /** How long a transaction a sending account signed may wait for its send (default 60 s; accountSender.ts). */
  sendWindowMs?: number;
}

/** The in-process chain worker, with its sending accounts and the bundler's figures for benchmarks and diagnostics. */
export interface LocalChainWorker extends ChainWorker, SendingAccounts {
  readonly client: ChainClient;
  bundlerStats(): Readonly<BundlerStats>;
}

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
  // A failing endpoint is logged once a minute per endpoint and reason; every failure is counted (rpcEndpointFailed).
  const failoverLoggedAt = new Map<string, number>();
  const client = createChainClient(config, {
    failover: {
      onEndpointFailed: (endpoint, reason) => {
        deps.rpcEndpointFailed?.(config.name, endpoint, reason);
        const key = `${endpoint} ${reason}`;
        if (Date.now() - (failoverLoggedAt.get(key) ?? 0) < 60_000) return;
        failoverLoggedAt.set(key, Date.now());
        log.warn({ chain: config.name, endpoint, reason }, reason === 'rateLimited' ? 'an RPC endpoint rate-limits (429): backing off' : 'an RPC endpoint failed: the next one is used');
      },
    },
  });
  const wallets = createWalletResolver(client, config, deps.serviceSecret);
  const bundlerConfig = config.bundler;
  const outside = bundlerConfig.kind === 'rpc' ? createBundlerClient({ url: bundlerConfig.url, entryPoint: config.entryPoint }) : undefined;
  const nodeFees = createFeeReader(client, deps.feeMaxAgeMs ?? 1_000);
  let cappedWarnedAt = 0;
  const fees =
    outside && bundlerConfig.kind === 'rpc'
      ? withBundlerGasPrice(nodeFees, outside, deps.feeMaxAgeMs ?? 1_000, bundlerConfig.maxGasPriceRatio, (asked, cap) => {
          if (Date.now() - cappedWarnedAt < 60_000) return;
          cappedWarnedAt = Date.now();
          log.warn({ chain: config.name, asked: asked.maxFeePerGas.toString(), cap: cap.toString() }, 'the bundler asks more than bundler.maxGasPriceRatio × the node\'s fees: capped');
        })
      : nodeFees;
  const nonces = new NonceAllocator();
  const prepared = new PreparedOperations();
  const pvgAdvice = outside && bundlerConfig.kind === 'rpc' ? bundlerPreVerificationGas(outside, bundlerConfig.maxPreVerificationGasRatio) : undefined;
  const estimates = createOperationEstimates({
    client,
    config,
    wallets,
    fees,
    reuseMs: deps.estimateReuseMs ?? 5_000,
    ...(pvgAdvice && { bundlerPreVerificationGas: (ours: bigint) => pvgAdvice.expected(ours) }),
  });
  const prepare = createOperationPreparer({
    config,
    client,
    locks,
    wallets,
    fees,
    nonces,
    estimates,
    prepared,
    sponsor: createSponsor(config),
    ...(pvgAdvice && { bundlerPreVerificationGas: (draft: UserOperation07, ours: bigint) => pvgAdvice.price(draft, ours) }),
    log,
  });
  // A head read below the previous one: the chain rewound under us. The nonces our own bundles advanced are
  // read again (bundler is set below, before any read can run).
  const reads = createChainReads(client, {
    onRewind: (from, to) => {
      log.warn({ from: from.toString(), to: to.toString() }, 'the chain rewound (its head went down): nonces are read from the chain again');
      bundler.resyncNonces();
    },
  });
  const { x402SettlerKey: settlerKey, faucetKey } = config.sendingAccounts;
  const executors = config.executorKeys.map((k) => privateKeyToAccount(k).address);
  const settler = settlerKey ? privateKeyToAccount(settlerKey) : undefined;
  const faucet = faucetKey ? privateKeyToAccount(faucetKey) : undefined;
  const senders = [...executors, ...[settler, faucet].flatMap((a) => (a ? [a.address] : []))];
  const accounts = createAccountSender({
    config,
    client,
    locks,
    fees,
    accounts: { x402Settlement: settler, faucetTransfer: faucet },
    serviceAccounts: [...executors, ...(config.paymasterSignerKey ? [privateKeyToAccount(config.paymasterSignerKey).address] : []), config.beneficiary],
    sendWindowMs: deps.sendWindowMs,
    log,
  });
  const named = createNamedReads(client, config);
  let restored = deps.requireRestore !== true;

  // Fail fast on a wrong RPC URL or chain id rather than on the first request.
  const actualChainId = await client.getChainId().catch((e: unknown) => {
    throw new ChainError('rpc_unavailable', `${config.name}: ${rpcOrigin(config.rpcUrl)} did not answer: ${describeError(e)}`, { cause: e });
  });
  if (actualChainId !== config.chainId) {
    throw new ChainError('invalid_operation', `${config.name}: ${rpcOrigin(config.rpcUrl)} serves chain ${actualChainId}, configured ${config.chainId}`);
  }

  // Only the built-in VerifyingPaymaster's paymasterData has a layout we know: an ERC-7677 service's window is its own.
  const sponsorshipWindow = config.sponsor.kind === 'builtin' ? parseSponsorshipWindow : () => undefined;
  const onDropped = (e: { sender: Address; nonce: bigint; hash: Hex }) => nonces.release(e.sender, e.nonce, e.hash);
  const onIncluded = (e: { sender: Address; nonce: bigint }) => nonces.included(e.sender, e.nonce);
  const bundler: OperationBundler & { readonly stats: Partial<BundlerStats> } =
    bundlerConfig.kind === 'builtin'
      ? new Bundler({
          client,
          chain: config.name,
          chainId: config.chainId,
          entryPoint: config.entryPoint,
          beneficiary: config.beneficiary,
          executorKeys: config.executorKeys,
          maxOpsPerBundle: bundlerConfig.maxOpsPerBundle,
          maxWaitMs: bundlerConfig.maxWaitMs,
          maxBusyWaitMs: bundlerConfig.maxBusyWaitMs,
          syncSend: bundlerConfig.syncSend,
          receiptPollMs: bundlerConfig.receiptPollMs,
          locks,
          log,
          onDropped,
          onIncluded,
          sponsorshipWindow,
          ...(deps.logScan && { logScan: deps.logScan }),
          ...(deps.recentOutcomes !== undefined && { recentOutcomes: deps.recentOutcomes }),
          ...(deps.receiptTimeoutMs !== undefined && { receiptTimeoutMs: deps.receiptTimeoutMs }),
          ...(deps.bundleObserver && { observer: deps.bundleObserver }),
          l1DataFeeApartFromGas: l1DataFeeOf(config).kind === 'opStack',
        })
      : new RpcBundler({
          bundler: outside!,
          client,
          chain: config.name,
          entryPoint: config.entryPoint,
          receiptPollMs: bundlerConfig.receiptPollMs,
          recheckAfterMs: bundlerConfig.recheckAfterMs,
          maxInFlightPerSender: bundlerConfig.maxInFlightPerSender,
          log,
          onDropped,
          onIncluded,
          sponsorshipWindow,
          ...(deps.logScan && { logScan: deps.logScan }),
          ...(deps.recentOutcomes !== undefined && { recentOutcomes: deps.recentOutcomes }),
        });
  const outcomes = createOperationOutcomes({
    client,
    bundler,
    reads,
    entryPoint: config.entryPoint,
    requiredConfirmations: config.confirmations,
    logScan: deps.logScan,
    log,
  });
  let closed = false;
  const assertOpen = () => {
    if (closed) throw new ChainError('closed', `${config.name} chain worker is closed`);
  };

  const worker: LocalChainWorker = {
    chain: config.name,
    client,

    async resolveWallet(ref) {
      assertOpen();
      const w = await wallets.resolve(ref).catch(rethrowAsRpcUnavailable);
      return { address: w.address, deployed: w.deployed };
    },

    async getBalances(ref) {
      assertOpen();
      return wallets.balances(ref).catch(rethrowAsRpcUnavailable);
    },

    async simulate(ref, calls, opts) {
      assertOpen();
      return estimates.simulate(ref, calls, opts);
    },

    async prepareOperation(ref, calls, opts) {
      assertOpen();
      if (!restored) throw new ChainError('not_restored', `${config.name} chain worker has not been told the operations in flight yet`);
      return prepare(ref, calls, opts);
    },

    async submitOperation(op) {
      assertOpen();
      const parsed = prepared.signedHere(op)
        ? fromSignedUserOperation(op)
        : verifySubmittedOperation(op, { entryPoint: config.entryPoint, chainId: config.chainId });
      const result = bundler.submit(op, parsed);
      prepared.forget(op.hash);
      if (result === 'accepted') {
        const window = sponsorshipWindow(parsed.paymasterData);
        nonces.reserve(parsed.sender, parsed.nonce, op.hash as Hex, window?.validUntil ?? Number.MAX_SAFE_INTEGER);
      }
    },

    async getOperationOutcome(op): Promise<OperationOutcome> {
      assertOpen();
      return outcomes.outcomeOf(op).catch(rethrowAsRpcUnavailable);
    },

    async withdrawOperation(op) {
      assertOpen();
      const sender = getAddress(op.sender);
      const nonce = BigInt(op.nonce);
      const hash = op.hash as Hex;
      // Under the wallet's nonce lock: a prepare of the wallet sees the nonces either all reserved or all given back.
      return locks
        .withLock(`nonce:${config.name}:${sender.toLowerCase()}`, 30_000, async () => {
          // Withdrawn before: the same answer. A restore since (the controller restarted before recording it) may have
          // reserved its nonce again: given back again.
          const known = bundler.outcomeOf(hash);
          if (known?.state === 'dropped' && known.code === 'withdrawn') {
            nonces.release(sender, nonce, hash);
            return { state: 'withdrawn' as const, withdrawn: [hash] };
          }
          // Then the chain: an operation whose nonce it has used (ours, carried earlier or by a process before a
          // restart, or another one) is not withdrawn; its outcome comes as usual. A bundle of ours that lands
          // meanwhile carried its operations, which the synchronous withdrawal below then finds carried.
          const chainNonce = await readEntryPointNonce(client, config.entryPoint, sender).catch(rethrowAsRpcUnavailable);
          if (chainNonce > nonce) return { state: 'sent' as const };
          // Held and not carried, signed here and never submitted, or not known to a restarted worker: withdrawn.
          const answer = bundler.withdraw({ hash, sender, nonce }, { evenIfNotHeld: true });
          if (answer.state === 'sent' || answer.state === 'notHeld') return { state: 'sent' as const };
          if (answer.state === 'settled') return { state: 'sent' as const }; // included or dropped already: its outcome stands
          for (const e of answer.entries) {
            prepared.forget(e.hash);
            nonces.release(e.sender, e.nonce, e.hash);
          }
          return { state: 'withdrawn' as const, withdrawn: answer.entries.map((e) => e.hash) };
        })
        .catch((e: unknown) => {
          if (isLockError(e, 'Unavailable')) throw new ChainError('rpc_unavailable', `${config.name}: ${e.message}`, { cause: e });
          throw e;
        });
    },

    async restoreInFlight(ops) {
      for (const op of ops) {
        const window = sponsorshipWindow(op.paymasterData as Hex | undefined);
        nonces.reserve(op.sender as Address, BigInt(op.nonce), op.hash as Hex, window?.validUntil ?? Number.MAX_SAFE_INTEGER);
      }
      restored = true;
    },

    onOutcome(listener) {
      return bundler.onOutcome((hash, outcome) => listener(hash, outcomes.withDepth(outcome)));
    },

    async getHead() {
      assertOpen();
      return reads.getHead();
    },

    async getFees() {
      assertOpen();
      const f = await fees().catch(rethrowAsRpcUnavailable);
      return { maxFeePerGas: f.maxFeePerGas, maxPriorityFeePerGas: f.maxPriorityFeePerGas, baseFeePerGas: f.baseFeePerGas };
    },

    async read(calls, opts) {
      assertOpen();
      return reads.read(calls, opts);
    },

    async getTransactionReceipt(hash) {
      assertOpen();
      return reads.getTransactionReceipt(hash);
    },

    async getLogs(query) {
      assertOpen();
      return reads.getLogs(query);
    },

    async senders() {
      return senders;
    },

    async getCode(address) {
      assertOpen();
      return named.getCode(address);
    },

    async isValidSignature(account, digest, signature) {
      assertOpen();
      return named.isValidSignature(account, digest, signature);
    },

    async tokenBalance(token, owner, block) {
      assertOpen();
      return named.tokenBalance(token, owner, block);
    },

    async authorizationState(id) {
      assertOpen();
      return named.authorizationState(id);
    },

    async findAuthorizationUse(id, lookbackBlocks) {
      assertOpen();
      return named.findAuthorizationUse(id, lookbackBlocks);
    },

    async simulateSend(purpose) {
      assertOpen();
      return accounts.simulateSend(purpose);
    },

    async sendingAccount(purpose) {
      return accounts.sendingAccount(purpose);
    },

    async signSend(purpose) {
      assertOpen();
      return accounts.signSend(purpose);
    },

    async send(hash) {
      assertOpen();
      return accounts.send(hash);
    },

    async abandon(hash) {
      assertOpen();
      return accounts.abandon(hash);
    },

    bundlerStats() {
      // An outside bundler's bundles are its own: only the operations' counts are ours.
      return { bundles: 0, bundleGasUsed: 0n, bySize: {}, ...bundler.stats } as BundlerStats;
    },

    async close() {
      if (closed) return;
      closed = true;
      accounts.close();
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

/** An RPC URL for messages: scheme and host only (providers put API keys in the path, query or userinfo). */
export function rpcOrigin(url: string): string {
  try {
    const u = new URL(url);
    return `${u.protocol}//${u.host}`;
  } catch {
    return '(unparsable RPC URL)';
  }
}
