import type { Hex } from 'viem';
import type { ExecutionRequest, Failure } from '../../api/v1alpha1/index.ts';
import { familyOf } from '../../protocols/index.ts';

/**
 * `failure` with its revert decoded by the family of the request's protocol action, when it has both: the status
 * record and the webhook then say what the synchronous 400 says (Comet's NotCollateralized, Aave's "36").
 */
export function withProtocolError(req: ExecutionRequest, failure: Failure): Failure {
  const action = req.spec.action;
  if (action === undefined || failure.revertData === undefined || failure.protocolError !== undefined) return failure;
  const family = familyOf(action.name.split('/')[0]!);
  const decoded = family?.decodeRevert(failure.revertData as Hex);
  if (!family || !decoded) return failure;
  return { ...failure, protocolError: { protocol: family.protocol, ...decoded } };
}
