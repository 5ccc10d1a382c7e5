import {
  credentials as grpcCredentials,
  Metadata,
  status,
  type CallOptions,
  type ChannelCredentials,
  type ChannelOptions,
  type ClientReadableStream,
  type ClientUnaryCall,
  type Interceptor,
  type ServiceError,
  type StatusObject,
} from '@grpc/grpc-js';
import type { Address, Hex } from 'viem';
import type { Call, SignedUserOperation } from '../../api/v1alpha1/index.ts';
import type { ChainName } from '../../config/chains.ts';
import { err, type Result } from '../../lib/result.ts';
import { ChainError, isChainError } from '../errors.ts';
import { silentLogger, type Logger } from '../../lib/logger.ts';
import { describeError } from '../revert.ts';
import type {
  ChainHead,
  ChainWorker,
  OperationOutcome,
  WithdrawResult,
  PrepareOptions,
  ReadCall,
  ReadOptions,
  ReadResult,
  SimulationFailure,
  SimulationResult,
  SimulateOptions,
  TransactionReceiptInfo,
  LogQuery,
  LogsResult,
  GasFees,
  WalletBalances,
  WalletInfo,
  WalletRef,
  SendFailure,
  SendingAccounts,
  SendPurpose,
  SendPurposeKind,
  SignedSend,
  AuthorizationRef,
} from '../types.ts';
import {
  decodeHash,
  decodeHead,
  decodeSenders,
  decodeOperation,
  decodeOutcome,
  decodeReadResult,
  decodeReceipt,
  decodeLogs,
  decodeFees,
  encodeLogsQuery,
  decodeSimulation,
  decodeWalletBalances,
  decodeWalletInfo,
  encodeCalls,
  encodeReadCalls,
  encodeOperation,
  encodeReadRequest,
  encodeWalletRef,
  decodeSendingAccount,
  decodeSendResult,
  decodeSignSendResult,
  encodePurposeKind,
  encodeSignSend,
  decodeBytes32,
  decodeHex,
  decodeUint,
  decodeOptionalHash,
  encodeAuthorizationRef,
} from './codec.ts';
import { fromGrpcStatus, isRetryableTransportFailure, isServiceError } from './errors.ts';
import * as pb from './generated/chainworker/v1/chainworker.ts';
import { CHAIN_METADATA_KEY } from './service.ts';
import { injectInto } from '../../lib/tracing.ts';

export type ChainWorkerMethod =
  | 'resolveWallet'
  | 'getBalances'
  | 'simulate'
  | 'prepareOperation'
  | 'submitOperation'
  | 'getOperationOutcome'
  | 'restoreInFlight'
  | 'withdrawOperation'
  | 'getHead'
  | 'read'
  | 'getTransactionReceipt'
  | 'getSenders'
  | 'getCode'
  | 'isValidSignature'
  | 'getTokenBalance'
  | 'getAuthorizationState'
  | 'findAuthorizationUse'
  | 'getLogs'
  | 'getFees'
  | 'simulateSend'
  | 'getSendingAccount'
  | 'signSend'
  | 'sendSigned'
  | 'abandonSigned';

/** How long the executors a worker named are taken as its senders before it is asked again. */
const SENDERS_TTL_MS = 60_000;

/**
 * Per-call deadlines. Each is above what the worker needs on a healthy chain by a wide margin and below the
 * point where a caller would rather hear "unavailable": the worker's own RPC timeout is 15 s per request.
 */
export const DEFAULT_DEADLINES_MS: Readonly<Record<ChainWorkerMethod, number>> = {
  resolveWallet: 10_000,
  getBalances: 10_000,
  // eth_call + eth_estimateGas, and bisection of a failing batch: a few RPC round trips.
  simulate: 20_000,
  // Waits for the wallet's nonce lock, estimates and signs. Generous on purpose: a deadline that passes while
  // the worker signs leaves an operation the caller never saw (see IDEMPOTENT.prepareOperation).
  prepareOperation: 30_000,
  submitOperation: 10_000,
  // For an operation the bundler no longer holds, a bounded eth_getLogs scan (10 chunks by default).
  getOperationOutcome: 30_000,
  restoreInFlight: 30_000,
  // Waits for the wallet's nonce lock; one nonce read for an operation the worker does not hold.
  withdrawOperation: 30_000,
  // The gateway's /health probe gives up after 2 s anyway.
  getHead: 5_000,
  // Up to 256 eth_calls in a few JSON-RPC batches (one round trip each, sent together), plus the head.
  read: 10_000,
  // The receipt and the head in one batch, then the block's timestamp.
  getTransactionReceipt: 10_000,
  getSenders: 5_000,
  // One or two RPC requests each; the log search spans at most 100 000 blocks.
  getCode: 10_000,
  isValidSignature: 10_000,
  getTokenBalance: 10_000,
  getAuthorizationState: 10_000,
  findAuthorizationUse: 20_000,
  getLogs: 20_000,
  getFees: 5_000,
  simulateSend: 10_000,
  getSendingAccount: 5_000,
  // Waits for the account's nonce lock, estimates and signs: a few RPC round trips, behind the settlements before it.
  signSend: 30_000,
  // One eth_sendRawTransaction under the account's lock.
  sendSigned: 15_000,
  // May send a 0-value transfer that fills the nonce.
  abandonSigned: 15_000,
};

/**
 * Which calls the client sends again after a transport failure (UNAVAILABLE or DEADLINE_EXCEEDED without an
 * answer of the worker). A Record so that a new method cannot be added without deciding.
 */
const IDEMPOTENT: Readonly<Record<ChainWorkerMethod, boolean>> = {
  resolveWallet: true, // reads
  getBalances: true, // reads
  simulate: true, // eth_call and estimates: reads
  getHead: true, // reads
  read: true, // eth_calls: reads
  getTransactionReceipt: true, // reads
  getSenders: true, // reads the worker's configuration
  getSendingAccount: true, // reads the worker's configuration
  getCode: true, // reads
  isValidSignature: true, // reads
  getTokenBalance: true, // reads
  getAuthorizationState: true, // reads
  findAuthorizationUse: true, // reads
  getLogs: true, // reads
  getFees: true, // reads
  simulateSend: true, // an eth_call: reads
  // Idempotent by what it spends: a retry after a lost answer gets the very transaction signed, while unsent. After
  // a worker restart nothing it signed was sent (the bytes never left it), so a new one takes the same nonce.
  signSend: true,
  sendSigned: true, // the same bytes again: ok when already sent
  abandonSigned: true, // a dropped transaction stays dropped, a sent one sent
  getOperationOutcome: true, // reads (it may cache what it found on chain: the same answer again)
  submitOperation: true, // idempotent by operation hash: the same signed operation again is a no-op, never re-signed
  restoreInFlight: true, // reserving the same nonces again changes nothing
  withdrawOperation: true, // a withdrawn operation answers withdrawn again; a carried one sent
  // NEVER retried here. Each call that reaches the worker may allocate the wallet's next nonce and sign; after
  // a transport failure we cannot tell whether it did. The worker answers a repeated prepare of the same
  // request with the same operation, but only from memory: not after a restart of the worker (which is when
  // UNAVAILABLE happens) and not in the last minute of the sponsorship. A second operation would take the
  // next nonce and wait behind a nonce nobody will ever send, until that orphan's sponsorship expires
  // (sponsorshipTtlSeconds, 10 min by default). So the failure goes to the caller as rpc_unavailable, and
  // the reconciler decides: it re-reads the request (another controller may have persisted an operation
  // meanwhile), gives up with chain_unavailable once admissionRetryMs has passed (nothing was sent, so
  // nothing executes), or tries admission again with backoff and the same requestId, which the worker's
  // dedup answers with the same operation when it still has it.
  prepareOperation: false,
};

export interface RetryOptions {
  /** Attempts of an idempotent call, the first included (default 3). */
  attempts?: number;
  /** Backoff before the second attempt, doubled each time (default 100 ms), capped (default 1 s), jittered. */
  initialBackoffMs?: number;
  maxBackoffMs?: number;
}

export interface ConnectChainWorkerOptions {
  /** Overrides of DEFAULT_DEADLINES_MS. */
  deadlinesMs?: Partial<Record<ChainWorkerMethod, number>>;
  retry?: RetryOptions;
  /** Reconnect backoff of the outcome stream: from initialMs (default 100 ms) doubling to maxMs (default 5 s). */
  watchBackoff?: { initialMs?: number; maxMs?: number };
  /** Default insecure (in-cluster traffic; see server.ts). */
  credentials?: ChannelCredentials;
  /** Overrides of the channel options (keepalive and reconnect backoff below). */
  channelOptions?: ChannelOptions;
  /** Around every call (metrics: src/metrics/grpc.ts). */
  interceptors?: Interceptor[];
  log?: Logger;
  /** restoreInFlight sends operations in calls of at most this many (default 500: well under 4 MB a message). */
  restoreBatchSize?: number;
}

/** The client's own figures, for metrics and tests. */
export interface RemoteChainWorkerStats {
  /** Calls sent again after a transport failure. */
  retries: number;
  /** Outcome stream (re)connections that reached the worker. */
  watchConnects: number;
}

/** A chain worker in another process, reached over gRPC. */
export interface RemoteChainWorker extends ChainWorker, SendingAccounts {
  /** The gRPC target, e.g. "chain-worker-arbitrum:50051". */
  readonly address: string;
  /**
   * Resolves once the outcome stream is subscribed at the worker (every outcome settled from then on is
   * pushed). Only while an onOutcome listener is registered; rejects when the client is closed.
   */
  watchReady(): Promise<void>;
  stats(): Readonly<RemoteChainWorkerStats>;
  /** Ends the outcome stream and the channel. The remote worker keeps running. */
  close(): Promise<void>;
}

/**
 * Keepalive pings every 20 s (10 s to answer) so a dead connection under a quiet outcome stream is noticed
 * and the stream reconnects; reconnect backoff capped at 5 s instead of grpc's 120 s, so a restarted worker
 * is used again within seconds.
 */
const CLIENT_CHANNEL_OPTIONS: ChannelOptions = {
  'grpc.keepalive_time_ms': 20_000,
  'grpc.keepalive_timeout_ms': 10_000,
  'grpc.keepalive_permit_without_calls': 1,
  'grpc.initial_reconnect_backoff_ms': 200,
  'grpc.max_reconnect_backoff_ms': 5_000,
};

type OutcomeListener = (opHash: Hex, outcome: OperationOutcome) => void;
type UnaryCallback<Res> = (error: ServiceError | null, response?: Res) => void;
type StartCall<Res> = (metadata: Metadata, options: Partial<CallOptions>, callback: UnaryCallback<Res>) => ClientUnaryCall;

/**
 * Connects to a chain worker served by serveChainWorker (server.ts). The connection is made lazily and
 * re-made by grpc when it breaks. Errors are the ones the in-process worker throws (errors.ts); a worker
 * that cannot be reached is `rpc_unavailable`, like a chain that does not answer.
 *
 * Outcomes: onOutcome listeners share one WatchOutcomes stream, re-opened with backoff when it breaks.
 * Outcomes settled while it is down are not replayed — the controller does not depend on pushes: a
 * Broadcasting request is polled with getOperationOutcome every outcomePollMs (15 s) until it settles.
 *
 * @example
 * const worker = connectChainWorker('arbitrum', 'chain-worker-arbitrum:50051');
 * const sim = await worker.simulate(ref, calls);
 */
export function connectChainWorker(chain: ChainName, address: string, opts: ConnectChainWorkerOptions = {}): RemoteChainWorker {
  return new GrpcChainWorker(chain, address, opts);
}

class GrpcChainWorker implements RemoteChainWorker {
  readonly chain: ChainName;
  readonly address: string;
  readonly #client: pb.ChainWorkerServiceClient;
  readonly #deadlines: Record<ChainWorkerMethod, number>;
  readonly #retry: Required<RetryOptions>;
  readonly #watchBackoff: { initialMs: number; maxMs: number };
  readonly #log: Logger;
  readonly #restoreBatchSize: number;
  readonly #stats: RemoteChainWorkerStats = { retries: 0, watchConnects: 0 };
  #closed = false;
  #senders: { at: number; addresses: Promise<Address[]> } | undefined;

  readonly #listeners = new Set<OutcomeListener>();
  readonly #reconnectListeners = new Set<() => void>();
  #watch: ClientReadableStream<pb.WatchOutcomesResponse> | undefined;
  #watchOpen = false;
  #watchTimer: NodeJS.Timeout | undefined;
  #watchFailures = 0;
  #readyWaiters: Array<{ resolve: () => void; reject: (e: Error) => void }> = [];

  constructor(chain: ChainName, address: string, opts: ConnectChainWorkerOptions) {
    this.chain = chain;
    this.address = address;
    this.#client = new pb.ChainWorkerServiceClient(address, opts.credentials ?? grpcCredentials.createInsecure(), {
      ...CLIENT_CHANNEL_OPTIONS,
      ...opts.channelOptions,
      ...(opts.interceptors && { interceptors: opts.interceptors }),
    });
    this.#deadlines = { ...DEFAULT_DEADLINES_MS, ...opts.deadlinesMs };
    this.#retry = { attempts: 3, initialBackoffMs: 100, maxBackoffMs: 1_000, ...opts.retry };
    this.#watchBackoff = { initialMs: 100, maxMs: 5_000, ...opts.watchBackoff };
    this.#log = opts.log ?? silentLogger;
    this.#restoreBatchSize = opts.restoreBatchSize ?? 500;
  }

  async resolveWallet(ref: WalletRef): Promise<WalletInfo> {
    const req = { wallet: encodeWalletRef(ref) };
    const res = await this.#call<pb.ResolveWalletResponse>('resolveWallet', (md, o, cb) => this.#client.resolveWallet(req, md, o, cb));
    return decodeWalletInfo(res.wallet);
  }

  async getBalances(ref: WalletRef): Promise<WalletBalances> {
    const req = { wallet: encodeWalletRef(ref) };
    const res = await this.#call<pb.GetBalancesResponse>('getBalances', (md, o, cb) => this.#client.getBalances(req, md, o, cb));
    return decodeWalletBalances(res.balances);
  }

  async simulate(ref: WalletRef, calls: readonly Call[], opts: SimulateOptions = {}): Promise<Result<SimulationResult, SimulationFailure>> {
    const req = { wallet: encodeWalletRef(ref), calls: encodeCalls(calls), observe: encodeReadCalls(opts.observe ?? []), outflows: opts.outflows === true };
    try {
      return decodeSimulation(await this.#call<pb.SimulateResponse>('simulate', (md, o, cb) => this.#client.simulate(req, md, o, cb)));
    } catch (e) {
      // The in-process worker reports "no answer" as a failure value, not a throw: so do we.
      if (isChainError(e, 'rpc_unavailable')) return err({ code: 'rpc_unavailable', message: e.shortMessage });
      throw e;
    }
  }

  async prepareOperation(ref: WalletRef, calls: readonly Call[], opts: PrepareOptions): Promise<SignedUserOperation> {
    const req = { wallet: encodeWalletRef(ref), calls: encodeCalls(calls), requestId: opts.requestId };
    const res = await this.#call<pb.PrepareOperationResponse>('prepareOperation', (md, o, cb) => this.#client.prepareOperation(req, md, o, cb));
    return decodeOperation(res.operation);
  }

  async submitOperation(op: SignedUserOperation): Promise<void> {
    const req = { operation: encodeOperation(op) };
    await this.#call<pb.SubmitOperationResponse>('submitOperation', (md, o, cb) => this.#client.submitOperation(req, md, o, cb));
  }

  async getOperationOutcome(op: SignedUserOperation): Promise<OperationOutcome> {
    const req = { operation: encodeOperation(op) };
    const res = await this.#call<pb.GetOperationOutcomeResponse>('getOperationOutcome', (md, o, cb) => this.#client.getOperationOutcome(req, md, o, cb));
    return decodeOutcome(res.outcome);
  }

  async withdrawOperation(op: SignedUserOperation): Promise<WithdrawResult> {
    const req = { operation: encodeOperation(op) };
    const res = await this.#call<pb.WithdrawOperationResponse>('withdrawOperation', (md, o, cb) => this.#client.withdrawOperation(req, md, o, cb));
    if (!res.withdrawn) return { state: 'sent' };
    return { state: 'withdrawn', withdrawn: res.withdrawnHashes.map((h) => decodeBytes32(h, 'withdrawnHashes')) };
  }

  async restoreInFlight(ops: readonly SignedUserOperation[]): Promise<void> {
    // Always at least one call: an empty list still tells a requireRestore worker that it may sign.
    for (let i = 0; i === 0 || i < ops.length; i += this.#restoreBatchSize) {
      const req = { operations: ops.slice(i, i + this.#restoreBatchSize).map(encodeOperation) };
      await this.#call<pb.RestoreInFlightResponse>('restoreInFlight', (md, o, cb) => this.#client.restoreInFlight(req, md, o, cb));
    }
  }

  async getHead(): Promise<ChainHead> {
    const res = await this.#call<pb.GetHeadResponse>('getHead', (md, o, cb) => this.#client.getHead({}, md, o, cb));
    return decodeHead(res);
  }

  async read(calls: readonly ReadCall[], opts: ReadOptions = {}): Promise<ReadResult> {
    const req = encodeReadRequest(calls, opts.block);
    return decodeReadResult(await this.#call<pb.ReadResponse>('read', (md, o, cb) => this.#client.read(req, md, o, cb)));
  }

  async getTransactionReceipt(hash: Hex): Promise<TransactionReceiptInfo | undefined> {
    const req = { hash };
    const res = await this.#call<pb.GetTransactionReceiptResponse>('getTransactionReceipt', (md, o, cb) =>
      this.#client.getTransactionReceipt(req, md, o, cb),
    );
    return decodeReceipt(res);
  }

  /**
   * The worker's executors, asked again at most once a minute: they are its configuration, which changes only with
   * a restart (a rotated key), and a look for every payment would cost a round trip each.
   */
  async senders(): Promise<Address[]> {
    if (this.#senders === undefined || Date.now() - this.#senders.at > SENDERS_TTL_MS) {
      const asked = this.#call<pb.GetSendersResponse>('getSenders', (md, o, cb) => this.#client.getSenders({}, md, o, cb)).then(decodeSenders);
      this.#senders = { at: Date.now(), addresses: asked };
      asked.catch(() => {
        if (this.#senders?.addresses === asked) this.#senders = undefined; // not cached: asked again next time
      });
    }
    return this.#senders.addresses;
  }

  async getCode(address: Address): Promise<Hex> {
    const res = await this.#call<pb.GetCodeResponse>('getCode', (md, o, cb) => this.#client.getCode({ address }, md, o, cb));
    return decodeHex(res.code, 'code');
  }

  async isValidSignature(account: Address, digest: Hex, signature: Hex): Promise<boolean> {
    const req = { account, digest, signature };
    return (await this.#call<pb.IsValidSignatureResponse>('isValidSignature', (md, o, cb) => this.#client.isValidSignature(req, md, o, cb))).valid;
  }

  async tokenBalance(token: Address, owner: Address, block?: bigint): Promise<bigint> {
    const req = { token, owner, ...(block !== undefined && { block: String(block) }) };
    const res = await this.#call<pb.GetTokenBalanceResponse>('getTokenBalance', (md, o, cb) => this.#client.getTokenBalance(req, md, o, cb));
    return decodeUint(res.raw, 'raw');
  }

  async authorizationState(id: AuthorizationRef): Promise<boolean> {
    const req = { authorization: encodeAuthorizationRef(id) };
    return (await this.#call<pb.GetAuthorizationStateResponse>('getAuthorizationState', (md, o, cb) => this.#client.getAuthorizationState(req, md, o, cb))).used;
  }

  async findAuthorizationUse(id: AuthorizationRef, lookbackBlocks: bigint): Promise<Hex | undefined> {
    const req = { authorization: encodeAuthorizationRef(id), lookbackBlocks: String(lookbackBlocks) };
    const res = await this.#call<pb.FindAuthorizationUseResponse>('findAuthorizationUse', (md, o, cb) => this.#client.findAuthorizationUse(req, md, o, cb));
    return decodeOptionalHash(res.txHash, 'txHash');
  }

  async getFees(): Promise<GasFees> {
    return decodeFees(await this.#call<pb.GetFeesResponse>('getFees', (md, o, cb) => this.#client.getFees({}, md, o, cb)));
  }

  async getLogs(query: LogQuery): Promise<LogsResult> {
    const req = encodeLogsQuery(query);
    return decodeLogs(await this.#call<pb.GetLogsResponse>('getLogs', (md, o, cb) => this.#client.getLogs(req, md, o, cb)));
  }

  async simulateSend(purpose: SendPurpose): Promise<Result<void, SendFailure>> {
    const req = encodeSignSend(purpose);
    return unavailableAsFailure(async () => decodeSendResult(await this.#call('simulateSend', (md, o, cb) => this.#client.simulateSend(req, md, o, cb))));
  }

  async sendingAccount(purpose: SendPurposeKind): Promise<Address | undefined> {
    const req = { purpose: encodePurposeKind(purpose) };
    return decodeSendingAccount(await this.#call('getSendingAccount', (md, o, cb) => this.#client.getSendingAccount(req, md, o, cb)));
  }

  async signSend(purpose: SendPurpose): Promise<Result<SignedSend, SendFailure>> {
    const req = encodeSignSend(purpose);
    return unavailableAsFailure(async () => decodeSignSendResult(await this.#call('signSend', (md, o, cb) => this.#client.signSend(req, md, o, cb))));
  }

  async send(hash: Hex): Promise<Result<void, SendFailure>> {
    return unavailableAsFailure(async () => decodeSendResult(await this.#call('sendSigned', (md, o, cb) => this.#client.sendSigned({ hash }, md, o, cb))));
  }

  async abandon(hash: Hex): Promise<Result<void, SendFailure>> {
    return unavailableAsFailure(async () => decodeSendResult(await this.#call('abandonSigned', (md, o, cb) => this.#client.abandonSigned({ hash }, md, o, cb))));
  }

  onReconnect(listener: () => void): () => void {
    this.#reconnectListeners.add(listener);
    return () => this.#reconnectListeners.delete(listener);
  }

  onOutcome(listener: OutcomeListener): () => void {
    this.#listeners.add(listener);
    if (!this.#watch && !this.#watchTimer && !this.#closed) this.#openWatch();
    return () => {
      this.#listeners.delete(listener);
      if (this.#listeners.size === 0) this.#stopWatch();
    };
  }

  watchReady(): Promise<void> {
    if (this.#closed) return Promise.reject(this.#closedError());
    if (this.#listeners.size === 0) return Promise.reject(new Error('no onOutcome listener: the outcome stream is not open'));
    if (this.#watchOpen) return Promise.resolve();
    return new Promise((resolve, reject) => this.#readyWaiters.push({ resolve, reject }));
  }

  stats(): Readonly<RemoteChainWorkerStats> {
    return { ...this.#stats };
  }

  async close(): Promise<void> {
    if (this.#closed) return;
    this.#closed = true;
    this.#stopWatch();
    for (const w of this.#readyWaiters.splice(0)) w.reject(this.#closedError());
    this.#client.close();
  }

  // ───────────────────────────── unary calls ─────────────────────────────

  async #call<Res>(method: ChainWorkerMethod, start: StartCall<Res>): Promise<Res> {
    const attempts = IDEMPOTENT[method] ? Math.max(1, this.#retry.attempts) : 1;
    for (let attempt = 1; ; attempt++) {
      if (this.#closed) throw this.#closedError();
      try {
        return await this.#once(method, start);
      } catch (e) {
        if (!isServiceError(e)) throw e;
        if (this.#closed) throw this.#closedError();
        if (attempt >= attempts || !isRetryableTransportFailure(e)) throw fromGrpcStatus(e, { chain: this.chain, address: this.address, method });
        this.#stats.retries++;
        const delay = jittered(this.#retry.initialBackoffMs, this.#retry.maxBackoffMs, attempt);
        this.#log.debug({ chain: this.chain, method, attempt, delayMs: delay, grpcStatus: status[e.code] }, 'chain worker call failed in transport; retrying');
        await new Promise((r) => setTimeout(r, delay));
      }
    }
  }

  #once<Res>(method: ChainWorkerMethod, start: StartCall<Res>): Promise<Res> {
    return new Promise<Res>((resolve, reject) => {
      start(this.#metadata(), { deadline: Date.now() + this.#deadlines[method] }, (e, res) => {
        if (e) reject(e);
        else if (res === undefined) reject(new ChainError('rpc_unavailable', `${this.chain} chain worker sent no ${method} response`));
        else resolve(res);
      });
    });
  }

  #metadata(): Metadata {
    const md = new Metadata();
    md.set(CHAIN_METADATA_KEY, this.chain);
    injectInto((k, v) => md.set(k, v)); // the caller's trace (traceparent), when tracing is on
    return md;
  }

  #closedError(): ChainError {
    return new ChainError('closed', `the client of the ${this.chain} chain worker at ${this.address} is closed`);
  }

  // ───────────────────────────── the outcome stream ─────────────────────────────

  #openWatch(): void {
    const call = this.#client.watchOutcomes({}, this.#metadata()); // no deadline: it lives as long as we listen
    this.#watch = call;
    call.on('metadata', () => {
      // The worker sends its headers once our subscription is in place.
      this.#watchOpen = true;
      this.#watchFailures = 0;
      this.#stats.watchConnects++;
      for (const w of this.#readyWaiters.splice(0)) w.resolve();
      if (this.#stats.watchConnects > 1) {
        for (const l of this.#reconnectListeners) {
          try {
            l();
          } catch (e) {
            this.#log.error({ chain: this.chain, err: describeError(e) }, 'reconnect listener threw');
          }
        }
      }
    });
    call.on('data', (m: pb.WatchOutcomesResponse) => this.#deliver(m));
    call.on('error', () => {}); // the 'status' event below handles every ending
    call.on('status', (s: StatusObject) => {
      if (this.#watch !== call) return;
      this.#watch = undefined;
      this.#watchOpen = false;
      if (this.#closed || this.#listeners.size === 0) return;
      const delay = jittered(this.#watchBackoff.initialMs, this.#watchBackoff.maxMs, ++this.#watchFailures);
      this.#log.warn(
        { chain: this.chain, address: this.address, grpcStatus: status[s.code], details: s.details, retryInMs: delay },
        'outcome stream ended; reconnecting (outcomes meanwhile are found by polling)',
      );
      this.#watchTimer = setTimeout(() => {
        this.#watchTimer = undefined;
        if (!this.#closed && this.#listeners.size > 0 && !this.#watch) this.#openWatch();
      }, delay);
    });
  }

  #deliver(m: pb.WatchOutcomesResponse): void {
    let hash: Hex;
    let outcome: OperationOutcome;
    try {
      hash = decodeHash(m.opHash);
      outcome = decodeOutcome(m.outcome);
    } catch (e) {
      this.#log.error({ chain: this.chain, err: describeError(e) }, 'unreadable outcome from the chain worker; ignored (polling finds it)');
      return;
    }
    for (const l of this.#listeners) {
      try {
        l(hash, outcome);
      } catch (e) {
        this.#log.error({ chain: this.chain, err: describeError(e) }, 'outcome listener threw');
      }
    }
  }

  #stopWatch(): void {
    clearTimeout(this.#watchTimer);
    this.#watchTimer = undefined;
    const call = this.#watch;
    this.#watch = undefined;
    this.#watchOpen = false;
    call?.cancel();
  }
}

/** Exponential backoff with jitter in [d/2, d]: spread out, never zero. */
function jittered(initialMs: number, maxMs: number, attempt: number): number {
  const d = Math.min(maxMs, initialMs * 2 ** (attempt - 1));
  return Math.round(d / 2 + Math.random() * (d / 2));
}

/** A worker that did not answer is a sending account's `rpc_unavailable` failure, as the in-process one reports it. */
async function unavailableAsFailure<T>(run: () => Promise<Result<T, SendFailure>>): Promise<Result<T, SendFailure>> {
  try {
    return await run();
  } catch (e) {
    if (isChainError(e, 'rpc_unavailable')) return err({ code: 'rpc_unavailable', message: e.message });
    throw e;
  }
}
