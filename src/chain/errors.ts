import { AgentWalletError } from '../lib/errors.ts';
import { describeError } from './revert.ts';

export type ChainErrorCode =
  /** The RPC endpoint did not answer or answered with an operational error: retry later. */
  | 'rpc_unavailable'
  /** A call reverted when the worker estimated it for signing. */
  | 'simulation_reverted'
  /** The wallet cannot cover the value the calls send. */
  | 'insufficient_funds'
  /** A submitted operation is malformed or not for this chain / EntryPoint / signer. */
  | 'invalid_operation'
  /** Another operation with the same sender and nonce is already pending. */
  | 'nonce_conflict'
  /** The worker was closed. */
  | 'closed'
  /**
   * The worker (re)started and has not yet been told which signed operations are in flight: it cannot pick a
   * nonce safely. The controller answers with restoreInFlight and tries again.
   */
  | 'not_restored'
  /** A read outside what the worker serves: too many calls, a block beyond the head. */
  | 'invalid_request';

/** An error the chain worker raises on purpose; `code` is stable. */
export class ChainError extends AgentWalletError<ChainErrorCode> {
  override readonly name = 'ChainError';
}

export const isChainError = (e: unknown, code?: ChainErrorCode): e is ChainError =>
  e instanceof ChainError && (code === undefined || e.code === code);

/** For a chain call's failure: a ChainError passes as it is, anything else means the chain did not answer. */
export function rethrowAsRpcUnavailable(e: unknown): never {
  if (e instanceof ChainError) throw e;
  throw new ChainError('rpc_unavailable', `the chain did not answer: ${describeError(e)}`, { cause: e });
}
