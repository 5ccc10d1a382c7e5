import type { Hex } from 'viem';
import { ProtocolError } from '../../protocols/common/errors.ts';
import type { AnyFamily } from '../../protocols/types.ts';
import { GatewayError } from '../errors.ts';

/** A protocol endpoint's refusal in the API's error body: 400 naming the field, 404, or 502. */
export function protocolErrorToGateway(e: ProtocolError): GatewayError {
  if (e.field !== undefined) {
    // The shape of a validation error: `field`, and the one issue.
    const issue = { field: e.field, code: e.code, message: e.shortMessage };
    return new GatewayError(e.status, e.code, e.shortMessage, { details: { field: e.field, issues: [issue], ...e.details } });
  }
  return new GatewayError(e.status, e.code, e.shortMessage, { details: e.details ?? {}, ...(e.status >= 500 && { headers: { 'retry-after': '1' } }) });
}

/**
 * A simulation refusal (400 simulation_failed, from /simulate or from the controller's admission) with the
 * protocol's own error decoded from its revert data: `protocol_error` {name, code?, message}, e.g. Aave's "36" as
 * COLLATERAL_CANNOT_COVER_NEW_BORROW, Comet's NotCollateralized.
 */
export function withProtocolRevert(e: unknown, family: AnyFamily): unknown {
  if (!(e instanceof GatewayError) || e.code !== 'simulation_failed') return e;
  const data = e.details?.['revert_data'];
  if (typeof data !== 'string') return e;
  const decoded = family.decodeRevert(data as Hex);
  if (!decoded) return e;
  return new GatewayError(400, e.code, `simulation reverted: ${family.protocol} ${decoded.name}: ${decoded.message}`, {
    details: { ...e.details, protocol_error: { protocol: family.protocol, ...decoded } },
    headers: { ...e.headers },
  });
}

/** Runs an endpoint, with its refusals as the API's errors. */
export async function answering<T>(family: AnyFamily, run: () => Promise<T>): Promise<T> {
  try {
    return await run();
  } catch (e) {
    if (e instanceof ProtocolError) throw protocolErrorToGateway(e);
    throw withProtocolRevert(e, family);
  }
}
