import { Metadata, status, type ServiceError, type StatusObject } from '@grpc/grpc-js';
import { ChainError, type ChainErrorCode } from '../errors.ts';
import { AgentWalletError } from '../../lib/errors.ts';
import { WireFormatError } from './codec.ts';

/**
 * Worker errors ↔ gRPC statuses. The gRPC code tells generic clients (grpcurl, a mesh) what kind of failure it
 * is; our own error code travels in trailers so the client can rebuild the very error the in-process worker
 * would have thrown — the controller branches on `isChainError(e, 'rpc_unavailable')` (admission deadline),
 * `isChainError(e, 'not_restored')` (restore, then prepare again) and the gateway on `AgentWalletError.code`
 * (503 for rpc_unavailable and closed).
 */

/** Our stable error code (`ChainErrorCode` for a ChainError). Its presence marks an answer of the worker. */
export const ERROR_CODE_KEY = 'aw-error-code';
/** The error's class name: `ChainError` is rebuilt as a ChainError, anything else as ChainWorkerRemoteError. */
export const ERROR_NAME_KEY = 'aw-error-name';
/** `details` of the error as UTF-8 JSON (revert reason and data, request id…). */
export const ERROR_DETAILS_KEY = 'aw-error-details-bin';

/** The gRPC status of each ChainError code; the Record makes a new code a compile error until it is mapped. */
const CHAIN_ERROR_STATUS: Readonly<Record<ChainErrorCode, status>> = {
  // Operational: the chain behind the worker did not answer. The worker already retried its RPC; the caller
  // backs off (the client does not retry these: only transport failures, see isRetryableTransportFailure).
  rpc_unavailable: status.UNAVAILABLE,
  closed: status.UNAVAILABLE,
  // The calls fail now: a fact about the request, not the worker.
  simulation_reverted: status.FAILED_PRECONDITION,
  insufficient_funds: status.FAILED_PRECONDITION,
  // The worker must be told the operations in flight first (the controller restores, then prepares again).
  not_restored: status.FAILED_PRECONDITION,
  invalid_operation: status.INVALID_ARGUMENT,
  // A read beyond the worker's bounds (too many calls, a block past the head): the request, not the worker.
  invalid_request: status.INVALID_ARGUMENT,
  nonce_conflict: status.ABORTED,
};

/** An error the remote worker (or the transport to it) raised that has no ChainError counterpart. */
export class ChainWorkerRemoteError extends AgentWalletError<string> {
  override readonly name = 'ChainWorkerRemoteError';
  readonly grpcCode: status;
  constructor(code: string, message: string, grpcCode: status, opts: { cause?: unknown; details?: Record<string, unknown> } = {}) {
    super(code, message, opts);
    this.grpcCode = grpcCode;
  }
}

/** Server side: the status a handler answers for an error the worker threw. */
export function toGrpcStatus(e: unknown): StatusObject {
  const metadata = new Metadata();
  if (e instanceof AgentWalletError) {
    const code: status =
      e instanceof ChainError
        ? CHAIN_ERROR_STATUS[e.code]
        : e instanceof WireFormatError
          ? status.INVALID_ARGUMENT
          : status.UNKNOWN;
    metadata.set(ERROR_CODE_KEY, e instanceof WireFormatError ? 'invalid_request' : e.code);
    metadata.set(ERROR_NAME_KEY, e.name);
    if (e.details) metadata.set(ERROR_DETAILS_KEY, Buffer.from(JSON.stringify(e.details, jsonSafe), 'utf8'));
    return { code, details: e.shortMessage, metadata };
  }
  // A bug, not a decision of the worker: no code of ours, INTERNAL.
  metadata.set(ERROR_CODE_KEY, 'internal');
  metadata.set(ERROR_NAME_KEY, e instanceof Error ? e.name : 'Error');
  return { code: status.INTERNAL, details: `chain worker internal error: ${e instanceof Error ? e.message : String(e)}`, metadata };
}

const jsonSafe = (_key: string, value: unknown): unknown => (typeof value === 'bigint' ? value.toString() : value);

export const isServiceError = (e: unknown): e is ServiceError =>
  e instanceof Error && typeof (e as Partial<ServiceError>).code === 'number' && (e as Partial<ServiceError>).metadata instanceof Metadata;

const first = (md: Metadata | undefined, key: string): string | Buffer | undefined => md?.get(key)[0];

/**
 * Whether a failed call may be sent again: only when the worker never answered (the transport failed or the
 * deadline passed) — an answer of the worker carries our error code and is final for this attempt.
 */
export const isRetryableTransportFailure = (e: ServiceError): boolean =>
  first(e.metadata, ERROR_CODE_KEY) === undefined && (e.code === status.UNAVAILABLE || e.code === status.DEADLINE_EXCEEDED);

export interface CallSite {
  chain: string;
  address: string;
  method: string;
}

/**
 * Client side: the error the in-process worker would have thrown for this status. A worker that cannot be
 * reached (or does not answer within the deadline) is `rpc_unavailable`, exactly like a chain that does not
 * answer: the caller retries with backoff, and admission gives up after its deadline with nothing signed.
 */
export function fromGrpcStatus(e: ServiceError, at: CallSite): Error {
  const code = first(e.metadata, ERROR_CODE_KEY);
  if (typeof code === 'string') {
    const name = first(e.metadata, ERROR_NAME_KEY);
    const detailsRaw = first(e.metadata, ERROR_DETAILS_KEY);
    const details = Buffer.isBuffer(detailsRaw) ? parseDetails(detailsRaw) : undefined;
    const opts = { cause: e, ...(details && { details }) };
    if (name === 'ChainError' && Object.hasOwn(CHAIN_ERROR_STATUS, code)) return new ChainError(code as ChainErrorCode, e.details, opts);
    return new ChainWorkerRemoteError(code, e.details, e.code, opts);
  }
  const where = `${at.chain} chain worker at ${at.address} (${at.method})`;
  const grpcStatus = status[e.code] ?? String(e.code);
  if (e.code === status.UNAVAILABLE || e.code === status.DEADLINE_EXCEEDED || e.code === status.CANCELLED) {
    return new ChainError('rpc_unavailable', `${where} did not answer: ${e.details || grpcStatus}`, { cause: e, details: { grpcStatus } });
  }
  return new ChainWorkerRemoteError(`grpc_${grpcStatus.toLowerCase()}`, `${where} failed: ${e.details || grpcStatus}`, e.code, {
    cause: e,
    details: { grpcStatus },
  });
}

function parseDetails(raw: Buffer): Record<string, unknown> | undefined {
  try {
    const v: unknown = JSON.parse(raw.toString('utf8'));
    return v !== null && typeof v === 'object' && !Array.isArray(v) ? (v as Record<string, unknown>) : undefined;
  } catch {
    return undefined;
  }
}
