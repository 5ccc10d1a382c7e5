import type { ExecutionRequest } from '../../api/v1alpha1/index.ts';
import { inFlightOperation } from './restorer.ts';

/**
 * The ExecutionRequest index of signed requests not yet finished, by key (ApiClient name): a kill switch turned on
 * re-queues them, so their operations are withdrawn now (phases/withdraw.ts), not at their next poll.
 */
export const SIGNED_BY_KEY = 'signedByKey';
export const signedByKey = (r: ExecutionRequest): readonly string[] => (inFlightOperation(r) ? [r.spec.apiClient] : []);
