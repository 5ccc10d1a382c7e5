import { Metadata, status, type handleUnaryCall, type ServerWritableStream, type StatusObject } from '@grpc/grpc-js';
import type { SignedUserOperation as DomainOperation } from '../../api/v1alpha1/index.ts';
import { ChainError } from '../errors.ts';
import { extractFrom, inRemoteSpan, TRACERS } from '../../lib/tracing.ts';
import { silentLogger, type Logger } from '../../lib/logger.ts';
import { describeError } from '../revert.ts';
import type { ChainWorker, SendingAccounts } from '../types.ts';
import {
  decodeAddress,
  decodeAuthorizationRef,
  decodeBytes32,
  decodeHex,
  decodeUint,
  decodeCalls,
  decodeHashRequest,
  decodePurposeKind,
  decodeReadCalls,
  decodeSignSend,
  decodeOperation,
  decodeReadRequest,
  decodeReceiptRequest,
  decodeLogsQuery,
  decodeWalletRef,
  encodeHead,
  encodeSenders,
  encodeSendingAccount,
  encodeSendResult,
  encodeSignSendResult,
  encodeOperation,
  encodeOutcome,
  encodeReadResult,
  encodeReceipt,
  encodeLogs,
  encodeFees,
  encodeSimulation,
  encodeWalletBalances,
  encodeWalletInfo,
} from './codec.ts';
import { ERROR_CODE_KEY, ERROR_NAME_KEY, toGrpcStatus } from './errors.ts';
import type {
  ChainWorkerServiceServer,
  SignedUserOperation,
  WatchOutcomesRequest,
  WatchOutcomesResponse,
} from './generated/chainworker/v1/chainworker.ts';

/** Request metadata naming the chain the caller means; a worker of another chain refuses the call. */
export const CHAIN_METADATA_KEY = 'aw-chain';

export interface ChainWorkerServiceOptions {
  log?: Logger;
}

export interface ChainWorkerService {
  implementation: ChainWorkerServiceServer;
  /** Ends every open WatchOutcomes stream (status OK): graceful shutdown cannot finish while one is open. */
  endStreams(): void;
  /** Open WatchOutcomes streams. */
  streams(): number;
}

/**
 * The gRPC handlers of ChainWorkerService over a ChainWorker: decode and validate the request, call the
 * worker, encode the answer; errors become statuses (errors.ts). The lifecycle (port, health, shutdown) is
 * server.ts's job.
 */
export function createChainWorkerService(worker: ChainWorker & SendingAccounts, opts: ChainWorkerServiceOptions = {}): ChainWorkerService {
  const log = opts.log ?? silentLogger;
  const streams = new Map<ServerWritableStream<WatchOutcomesRequest, WatchOutcomesResponse>, () => void>();

  /** A caller that means another chain must never get an operation signed for this one. */
  function wrongChain(md: Metadata): StatusObject | undefined {
    const meant = md.get(CHAIN_METADATA_KEY)[0];
    if (meant === undefined || meant === worker.chain) return undefined;
    const trailers = new Metadata();
    trailers.set(ERROR_CODE_KEY, 'wrong_chain');
    trailers.set(ERROR_NAME_KEY, 'AgentWalletError');
    return { code: status.FAILED_PRECONDITION, details: `this worker serves ${worker.chain}, not ${String(meant)}`, metadata: trailers };
  }

  function failed(method: string, e: unknown): StatusObject {
    const s = toGrpcStatus(e);
    const fields = { chain: worker.chain, method, code: s.metadata.get(ERROR_CODE_KEY)[0], err: describeError(e) };
    if (s.code === status.INTERNAL) log.error(fields, 'chain worker call failed');
    else if (s.code === status.UNAVAILABLE) log.warn(fields, 'chain worker call failed');
    else log.debug(fields, 'chain worker call refused');
    return s;
  }

  function unary<Req, Res>(method: string, run: (req: Req) => Promise<Res>): handleUnaryCall<Req, Res> {
    return (call, callback) => {
      const refused = wrongChain(call.metadata);
      if (refused) return callback(refused, null);
      // Runs to completion even if the caller gives up (deadline, cancel): the worker's steps are not
      // interruptible halfway, and each is safe to finish (see client.ts on what a caller may repeat).
      // In the caller's trace when its metadata carries one (src/lib/tracing.ts).
      const parent = extractFrom(call.metadata, (md, k) => md.get(k)[0]?.toString());
      inRemoteSpan(TRACERS.chainWorker, `chainworker.${method}`, parent, () => run(call.request)).then(
        (res) => callback(null, res),
        (e: unknown) => callback(failed(method, e), null),
      );
    };
  }

  const implementation: ChainWorkerServiceServer = {
    resolveWallet: unary('ResolveWallet', async (req) => ({ wallet: encodeWalletInfo(await worker.resolveWallet(decodeWalletRef(req.wallet))) })),

    getBalances: unary('GetBalances', async (req) => ({ balances: encodeWalletBalances(await worker.getBalances(decodeWalletRef(req.wallet))) })),

    simulate: unary('Simulate', async (req) =>
      encodeSimulation(await worker.simulate(decodeWalletRef(req.wallet), decodeCalls(req.calls), { observe: decodeReadCalls(req.observe), ...(req.outflows && { outflows: true }) })),
    ),

    prepareOperation: unary('PrepareOperation', async (req) => {
      const op = await worker.prepareOperation(decodeWalletRef(req.wallet), decodeCalls(req.calls), { requestId: req.requestId });
      return { operation: encodeOperation(op) };
    }),

    submitOperation: unary('SubmitOperation', async (req) => {
      await worker.submitOperation(asOperation(req.operation));
      return {};
    }),

    getOperationOutcome: unary('GetOperationOutcome', async (req) => ({
      outcome: encodeOutcome(await worker.getOperationOutcome(asOperation(req.operation))),
    })),

    withdrawOperation: unary('WithdrawOperation', async (req) => {
      const r = await worker.withdrawOperation(asOperation(req.operation));
      return r.state === 'withdrawn' ? { withdrawn: true, withdrawnHashes: r.withdrawn } : { withdrawn: false, withdrawnHashes: [] };
    }),

    restoreInFlight: unary('RestoreInFlight', async (req) => {
      await worker.restoreInFlight(req.operations.map(asOperation));
      return {};
    }),

    getHead: unary('GetHead', async () => encodeHead(await worker.getHead())),

    read: unary('Read', async (req) => {
      const { calls, block } = decodeReadRequest(req);
      return encodeReadResult(await worker.read(calls, { block }));
    }),

    getTransactionReceipt: unary('GetTransactionReceipt', async (req) => encodeReceipt(await worker.getTransactionReceipt(decodeReceiptRequest(req)))),

    getSenders: unary('GetSenders', async () => encodeSenders(await worker.senders())),

    getCode: unary('GetCode', async (req) => ({ code: await worker.getCode(decodeAddress(req.address, 'address')) })),

    isValidSignature: unary('IsValidSignature', async (req) => ({
      valid: await worker.isValidSignature(decodeAddress(req.account, 'account'), decodeBytes32(req.digest, 'digest'), decodeHex(req.signature, 'signature')),
    })),

    getTokenBalance: unary('GetTokenBalance', async (req) => {
      const block = req.block === undefined ? undefined : decodeUint(req.block, 'block');
      return { raw: String(await worker.tokenBalance(decodeAddress(req.token, 'token'), decodeAddress(req.owner, 'owner'), block)) };
    }),

    getAuthorizationState: unary('GetAuthorizationState', async (req) => ({ used: await worker.authorizationState(decodeAuthorizationRef(req.authorization)) })),

    findAuthorizationUse: unary('FindAuthorizationUse', async (req) => {
      const hash = await worker.findAuthorizationUse(decodeAuthorizationRef(req.authorization), decodeUint(req.lookbackBlocks, 'lookbackBlocks'));
      return hash ? { txHash: hash } : {};
    }),

    getFees: unary('GetFees', async () => encodeFees(await worker.getFees())),

    getLogs: unary('GetLogs', async (req) => encodeLogs(await worker.getLogs(decodeLogsQuery(req)))),

    simulateSend: unary('SimulateSend', async (req) => encodeSendResult(await worker.simulateSend(decodeSignSend(req)))),

    getSendingAccount: unary('GetSendingAccount', async (req) => encodeSendingAccount(await worker.sendingAccount(decodePurposeKind(req.purpose)))),

    signSend: unary('SignSend', async (req) => encodeSignSendResult(await worker.signSend(decodeSignSend(req)))),

    sendSigned: unary('SendSigned', async (req) => encodeSendResult(await worker.send(decodeHashRequest(req)))),

    abandonSigned: unary('AbandonSigned', async (req) => encodeSendResult(await worker.abandon(decodeHashRequest(req)))),

    watchOutcomes(call) {
      const refused = wrongChain(call.metadata);
      if (refused) {
        call.emit('error', refused);
        return;
      }
      const unsubscribe = worker.onOutcome((opHash, outcome) => {
        if (call.cancelled || call.writableEnded) return;
        call.write({ opHash, outcome: encodeOutcome(outcome) });
      });
      const stop = () => {
        unsubscribe();
        streams.delete(call);
      };
      streams.set(call, stop);
      call.on('cancelled', stop);
      call.on('close', stop);
      call.on('error', stop);
      // Headers only now: the client takes them as "subscribed", so nothing pushed after this point is missed.
      call.sendMetadata(new Metadata());
      log.debug({ chain: worker.chain, peer: call.getPeer() }, 'outcome stream opened');
    },
  };

  return {
    implementation,
    endStreams() {
      for (const [call, stop] of [...streams]) {
        stop();
        if (!call.writableEnded) call.end();
      }
    },
    streams: () => streams.size,
  };
}

/**
 * A malformed operation is refused as the in-process worker refuses one (`invalid_operation`), not as a
 * malformed request: the controller's handling of a submitted operation does not depend on the transport.
 */
function asOperation(m: SignedUserOperation | undefined): DomainOperation {
  try {
    return decodeOperation(m);
  } catch (e) {
    throw new ChainError('invalid_operation', e instanceof Error ? e.message : String(e), { cause: e });
  }
}
