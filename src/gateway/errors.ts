import { ArchiveError } from '../archive/types.ts';
import { isChainError } from '../chain/errors.ts';
import { HttpError } from '../http/errors.ts';
import type { OperationalErrors } from '../http/errorHandler.ts';
import { isStoreError } from '../store/types.ts';

/** An error the gateway answers on purpose (named so in the logs); src/http answers it like any HttpError. */
export class GatewayError extends HttpError {
  override readonly name: string = 'GatewayError';
}

const STORE_UNAVAILABLE = ['store_unavailable', 'the service cannot reach its state store; retry with backoff'] as const;

/**
 * The gateway's errors from other modules (store, archive, locks, chain worker) that mean "retry later", not
 * "bug": a 503 with a fixed message. Matched by class and code, so a new code in one domain cannot be mistaken
 * for another domain's.
 */
export const gatewayOperationalErrors: OperationalErrors = (error) => {
  const unavailable = (code: string, message: string) => new GatewayError(503, code, message, { headers: { 'retry-after': '1' }, cause: error });
  if (isStoreError(error, 'Unavailable')) return unavailable(...STORE_UNAVAILABLE);
  if (error instanceof ArchiveError && error.code === 'Unavailable') return unavailable(...STORE_UNAVAILABLE);
  if (isChainError(error, 'rpc_unavailable')) return unavailable('chain_unavailable', 'the chain did not answer; retry with backoff');
  if (isChainError(error, 'closed')) return unavailable('service_unavailable', 'the service is shutting down; retry shortly');
  return undefined;
};
