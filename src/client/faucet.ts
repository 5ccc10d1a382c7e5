import type { DripResult } from '../api/http/faucet.ts';
import { err, ok, type Result } from '../lib/result.ts';
import { ApiError, apiErrorOf } from './errors.ts';

export const FAUCET_URL_ENV = 'AGENT_WALLET_FAUCET_URL';
/** The faucet `npm start` runs next to the service (spec 2.7's `{faucet_url}`). */
export const DEFAULT_FAUCET_URL = 'http://127.0.0.1:8090';

export type Drip = DripResult;

/**
 * The aUSD faucet's client (docs/faucet.md): `drip` sends test aUSD to a smart wallet. The faucet is a role
 * of its own with its own address; it needs no API key. A drip is not retried blindly: it moves tokens, and a
 * refused one (429) says when to come back.
 */
export function createFaucetClient(opts: { baseUrl?: string | undefined; fetch?: typeof fetch } = {}) {
  const baseUrl = (opts.baseUrl ?? process.env[FAUCET_URL_ENV] ?? DEFAULT_FAUCET_URL).replace(/\/+$/, '');
  const doFetch = opts.fetch ?? fetch;
  return {
    baseUrl,
    async drip(address: string, chain?: string): Promise<Result<Drip, ApiError>> {
      let res: Response;
      try {
        res = await doFetch(`${baseUrl}/api/drip`, {
          method: 'POST',
          headers: { 'content-type': 'application/json' },
          body: JSON.stringify({ address, ...(chain !== undefined && { chain }) }),
          signal: AbortSignal.timeout(60_000),
        });
      } catch (cause) {
        return err(new ApiError(0, 'no_answer', `no answer from the faucet at ${baseUrl}: ${(cause as Error).message}`, {}, undefined, { cause }));
      }
      if (!res.ok) return err(await apiErrorOf(res));
      return ok((await res.json()) as Drip);
    },
  };
}
