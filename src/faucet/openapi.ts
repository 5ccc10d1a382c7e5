import type { FastifyInstance } from 'fastify';
import { errorResponsesOf, registerOpenApi } from '../http/openapi.ts';

/** What each error status of the faucet means in its /openapi.json. */
const FAUCET_ERROR_STATUSES = {
  400: "Invalid request: invalid_address, unsupported_chain, missing_field, invalid_json (`field` names the field); address_not_allowed: one of the service's own accounts",
  413: 'The body is over the size limit: payload_too_large',
  415: 'The body is not application/json: unsupported_media_type',
  429: 'rate_limited: `limit` says whose drips ran out, "address" (this address on this chain) or "client" (your client address); retry after Retry-After seconds',
  500: 'Internal error (trace_id)',
  503:
    'Nothing was sent: chain_unavailable, faucet_empty, busy, service_unavailable; or the transfer was sent and not mined in time: ' +
    'receipt_timeout (tx_hash), or it reverted: transfer_failed. Retry after Retry-After seconds',
} as const;

export const faucetErrorResponses = errorResponsesOf(FAUCET_ERROR_STATUSES);

/** The faucet's /openapi.json. Call it before any route is registered. */
export function registerFaucetOpenApi(app: FastifyInstance, version: string): Promise<void> {
  return registerOpenApi(app, {
    info: {
      title: 'agent-wallet aUSD faucet',
      version,
      description: 'Sends aUSD test tokens to an agent smart wallet (spec §2.7). Errors: `{ error, message, ... }` as on the service.',
    },
    tags: [{ name: 'faucet', description: 'No API key needed; rate-limited per address and per client address' }],
  });
}
