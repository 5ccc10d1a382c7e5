import { request as httpRequest } from 'node:http';
import { request as httpsRequest } from 'node:https';
import { getAddress, type Address } from 'viem';
import { z } from 'zod';
import { guardedLookup, guardSocket, isLoopbackHost, type EgressPolicy } from '../../lib/egress/egress.ts';
import { ProtocolError } from '../common/errors.ts';

/**
 * Where perp-v2 gets prices. GMX has no on-chain index price an integrator reads: its keepers sign prices off chain,
 * and its clients read them from GMX's oracle keeper API (`GET /prices/tickers`, `GET /tokens`) to value positions,
 * pass to the Reader, and simulate an order's execution. The devnet serves the same API with its keeper's prices.
 */
export interface PriceSource {
  /** Each token's current min and max price, in GMX's contract format: USD × 10^(30 − the token's decimals). */
  prices(): Promise<ReadonlyMap<Address, TokenPrice>>;
  /** The tokens the oracle prices, with their decimals (synthetic index tokens have no contract to ask). */
  tokens(): Promise<ReadonlyMap<Address, OracleToken>>;
}

export interface TokenPrice {
  min: bigint;
  max: bigint;
  /** When the oracle last updated it (Unix seconds), when it says. */
  updatedAt?: number;
}

export interface OracleToken {
  address: Address;
  symbol: string;
  decimals: number;
  synthetic: boolean;
}

const Uint = z.union([z.string().regex(/^[0-9]{1,78}$/), z.number().int().nonnegative()]).transform((v) => BigInt(v));
const AddressText = z.string().regex(/^0x[0-9a-fA-F]{40}$/).transform((a) => getAddress(a));
const TickersSchema = z
  .array(z.object({ tokenAddress: AddressText, minPrice: Uint, maxPrice: Uint, updatedAt: z.number().optional(), timestamp: z.number().optional() }))
  .min(1);
const TokensSchema = z.object({
  tokens: z.array(z.object({ address: AddressText, symbol: z.string().max(32), decimals: z.int().min(0).max(36), synthetic: z.boolean().optional() })).min(1),
});

/** How long an answer is reused: GMX's keepers publish about once a second. */
const PRICES_TTL_MS = 1_000;
const TOKENS_TTL_MS = 60_000;
const TIMEOUT_MS = 5_000;
const MAX_BODY_BYTES = 2 * 1024 * 1024;

/**
 * GMX's oracle keeper API at `baseUrl`, through the service's egress checks: the name must resolve to a public
 * address (a loopback URL, which an operator configures for the devnet, may reach loopback and nothing else
 * private). Answers are validated and kept briefly, and concurrent asks share one request.
 */
export function oracleKeeperPrices(baseUrl: string): PriceSource {
  const url = new URL(baseUrl);
  const policy: EgressPolicy = isLoopbackHost(url) ? { allowLoopback: true, loopbackOnly: true } : {};
  const prices = cached(PRICES_TTL_MS, async () => {
    const tickers = TickersSchema.parse(await getJson(url, 'prices/tickers', policy));
    return new Map(tickers.map((t) => [t.tokenAddress, { min: t.minPrice, max: t.maxPrice, ...(t.updatedAt !== undefined && { updatedAt: t.updatedAt }) }]));
  });
  const tokens = cached(TOKENS_TTL_MS, async () => {
    const list = TokensSchema.parse(await getJson(url, 'tokens', policy)).tokens;
    return new Map(list.map((t) => [t.address, { address: t.address, symbol: t.symbol, decimals: t.decimals, synthetic: t.synthetic ?? false }]));
  });
  return { prices, tokens };
}

/** One answer per URL shared by every family context of a process (the gateway builds one per request). */
const sources = new Map<string, PriceSource>();
export const priceSourceFor = (baseUrl: string): PriceSource => {
  let s = sources.get(baseUrl);
  if (!s) sources.set(baseUrl, (s = oracleKeeperPrices(baseUrl)));
  return s;
};

function cached<T>(ttlMs: number, load: () => Promise<T>): () => Promise<T> {
  let value: { at: number; v: T } | undefined;
  let inFlight: Promise<T> | undefined;
  return async () => {
    if (value && Date.now() - value.at < ttlMs) return value.v;
    inFlight ??= load()
      .then((v) => {
        value = { at: Date.now(), v };
        return v;
      })
      .catch((e: unknown) => {
        throw e instanceof z.ZodError ? new ProtocolError('protocol_read_failed', `GMX's oracle keeper answered something else than its API: ${e.issues[0]?.message}`) : e;
      })
      .finally(() => (inFlight = undefined));
    return inFlight;
  };
}

/** GET `<base>/<path>` as JSON, within the timeout and the size cap; any failure is a protocol_read_failed. */
function getJson(base: URL, path: string, policy: EgressPolicy): Promise<unknown> {
  const target = new URL(path, base.href.endsWith('/') ? base.href : `${base.href}/`);
  const send = target.protocol === 'https:' ? httpsRequest : httpRequest;
  return new Promise((resolve, reject) => {
    const fail = (why: string) => reject(new ProtocolError('protocol_read_failed', `GMX's oracle keeper (${target.origin}) ${why}`));
    const req = send(target, { method: 'GET', lookup: guardedLookup(policy), timeout: TIMEOUT_MS, headers: { accept: 'application/json' } }, (res) => {
      if (res.statusCode !== 200) {
        res.resume();
        return fail(`answered HTTP ${res.statusCode} to /${path}`);
      }
      const chunks: Buffer[] = [];
      let size = 0;
      res.on('data', (c: Buffer) => {
        size += c.length;
        if (size > MAX_BODY_BYTES) req.destroy(new Error(`an answer above ${MAX_BODY_BYTES} bytes`));
        else chunks.push(c);
      });
      res.on('end', () => {
        try {
          resolve(JSON.parse(Buffer.concat(chunks).toString('utf8')));
        } catch {
          fail(`answered /${path} with something that is not JSON`);
        }
      });
      res.on('error', (e) => fail(`failed mid-answer: ${e.message}`));
    });
    req.on('socket', (socket) => guardSocket(socket, policy));
    req.on('timeout', () => req.destroy(new Error(`no answer within ${TIMEOUT_MS} ms`)));
    req.on('error', (e) => fail(`could not be read: ${e.message}`));
    req.end();
  });
}
