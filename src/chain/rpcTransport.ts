import { Agent as HttpAgent, request as httpRequest, type IncomingMessage } from 'node:http';
import { Agent as HttpsAgent, request as httpsRequest } from 'node:https';
import { custom, HttpRequestError, RpcRequestError, TimeoutError, type Transport } from 'viem';

export interface BatchingTransportOptions {
  /** One attempt's timeout (a whole batch to one endpoint): past it, the endpoint counts as failed. */
  timeoutMs?: number;
  /** Most calls in one JSON-RPC batch. */
  maxBatchSize?: number;
  /** viem's retries of a failed call (on top of the failover below, which each retry goes through again). */
  retryCount?: number;
  retryDelay?: number;
  failover?: FailoverOptions;
}

/** How the transport moves between its endpoints (docs/operations.md, "RPC endpoints"). */
export interface FailoverOptions {
  /**
   * How long an endpoint that failed (no connection, a timeout, a 5xx, a 4xx that blames it, an answer that is not JSON) is
   * passed over while another is usable; then it is tried again, the primary first. Default 30 s.
   */
  cooldownMs?: number;
  /** The most a batch waits in all for rate-limited (429) endpoints before it fails. Default 10 s. */
  maxRateLimitWaitMs?: number;
  /** The first wait after a 429 without Retry-After, doubled at each further 429 from that endpoint. Default 250 ms. */
  backoffBaseMs?: number;
  /** The longest single wait after a 429 without Retry-After. Default 4 s. */
  backoffMaxMs?: number;
  /**
   * Told each time an endpoint fails a batch (by its origin: scheme and host, never a path or key), and why:
   * `unreachable` (set aside for cooldownMs) or `rateLimited` (a 429). For metrics and logs; must not throw.
   */
  onEndpointFailed?: (endpoint: string, reason: 'unreachable' | 'rateLimited') => void;
}

interface Pending {
  body: { jsonrpc: '2.0'; id: number; method: string; params: unknown };
  resolve(value: unknown): void;
  reject(error: unknown): void;
}

type Answer = { id: number; result?: unknown; error?: { code: number; message: string; data?: unknown } };

/** What one POST of a batch to one endpoint came to. */
type Attempt =
  | { kind: 'answered'; answers: Answer[] }
  /** 429, or a 200 whose every answer is a rate-limit error (some providers answer so): wait, or try another. */
  | { kind: 'rateLimited'; retryAfterMs: number | undefined; error: Error }
  /** The endpoint is at fault: try another. */
  | { kind: 'unreachable'; error: Error }
  /** The request is at fault (REQUEST_FAULTS), and another endpoint would refuse it too. */
  | { kind: 'refused'; error: Error };

interface Endpoint {
  url: string;
  target: URL;
  agent: HttpAgent;
  send: typeof httpRequest;
  /** Passed over until then, after a failure. */
  downUntil: number;
  /** Rate-limited until then, after a 429. */
  limitedUntil: number;
  /** 429s in a row, for the exponential backoff. */
  limitStreak: number;
  /** The last 429's error: what a batch that cannot wait that long fails with, though it asked nothing. */
  limitError?: Error;
}

/**
 * HTTP statuses that blame the request (malformed, too large), not the endpoint. Every other 4xx (401, 403, 404,
 * 405, 408, …) and 5xx says this endpoint cannot serve us now: a revoked key, a wrong path, an outage.
 */
const REQUEST_FAULTS = new Set([400, 413, 414, 422]);

/** The longest Retry-After honoured: a larger one sets the endpoint aside for this long. */
const MAX_RETRY_AFTER_MS = 60_000;

/** JSON-RPC error codes providers use for "too many requests" in a 200 answer (Alchemy: 429, QuickNode: -32007). */
const RATE_LIMIT_CODES = new Set([429, -32007]);

/**
 * A viem transport for a chain worker under load: JSON-RPC calls made in the same tick go out as one batch
 * over a keep-alive connection pool. viem's `http` transport spends more CPU than the node itself at a few
 * hundred operations per second: one fetch (undici streams, an AbortController) per call and a TimeoutError,
 * stack trace included, built in advance for every call. Errors are viem's own (RpcRequestError,
 * HttpRequestError, TimeoutError), so revert data and error codes reach the callers exactly as with `http`.
 *
 * Several URLs: the first is the primary, the others fallbacks in order. A batch goes to the first endpoint not
 * passed over; an endpoint that fails (connection, timeout, 5xx, a 4xx but the request's own faults, not JSON) is
 * passed over for `cooldownMs` and the batch goes to the next at once. A JSON-RPC error is an answer (a revert,
 * "nonce too low"), never a reason to fail over. A 429 sets that endpoint aside for its Retry-After (up to 60 s),
 * or a capped exponential backoff, and the batch goes to another endpoint, or waits for the earliest one free,
 * within `maxRateLimitWaitMs`; past that it fails with the 429.
 * Sending a signed transaction again elsewhere is safe (the same hash); what a second node answers is in
 * docs/operations.md, "RPC endpoints".
 */
export function batchingHttp(urls: string | readonly string[], opts: BatchingTransportOptions = {}): Transport {
  const list = typeof urls === 'string' ? [urls] : [...urls];
  if (list.length === 0) throw new Error('batchingHttp: no URL');
  const endpoints: Endpoint[] = list.map((url) => {
    const target = new URL(url);
    const secure = target.protocol === 'https:';
    return {
      url,
      target,
      agent: secure ? new HttpsAgent({ keepAlive: true, maxSockets: 32 }) : new HttpAgent({ keepAlive: true, maxSockets: 32 }),
      send: secure ? httpsRequest : httpRequest,
      downUntil: 0,
      limitedUntil: 0,
      limitStreak: 0,
    };
  });
  const timeoutMs = opts.timeoutMs ?? 15_000;
  const maxBatch = opts.maxBatchSize ?? 100;
  const cooldownMs = opts.failover?.cooldownMs ?? 30_000;
  const maxRateLimitWaitMs = opts.failover?.maxRateLimitWaitMs ?? 10_000;
  const backoffBaseMs = opts.failover?.backoffBaseMs ?? 250;
  const backoffMaxMs = opts.failover?.backoffMaxMs ?? 4_000;
  let nextId = 1;
  let queue: Pending[] = [];
  let scheduled = false;

  /** Calls that wait for something (a block, for the Sync sends) travel alone, or the batch waits with them. */
  const unbatched = (method: string): boolean => method.endsWith('Sync');

  function flush(): void {
    scheduled = false;
    while (queue.length > 0) {
      const batch = queue.slice(0, maxBatch);
      queue = queue.slice(maxBatch);
      void post(batch);
    }
  }

  /** The endpoint to try next, among those this batch has not seen fail; a wait when all are rate-limited. */
  function choose(open: Endpoint[], now: number): Endpoint | { waitUntil: number } | undefined {
    if (open.length === 0) return undefined;
    const healthy = open.find((e) => e.downUntil <= now && e.limitedUntil <= now);
    if (healthy) return healthy;
    // All passed over after failures elsewhere: still try the one back soonest rather than fail unasked.
    const notLimited = open.filter((e) => e.limitedUntil <= now).sort((a, b) => a.downUntil - b.downUntil);
    if (notLimited[0]) return notLimited[0];
    return { waitUntil: Math.min(...open.map((e) => e.limitedUntil)) };
  }

  async function post(batch: Pending[]): Promise<void> {
    const payload = batch.length === 1 ? batch[0]!.body : batch.map((p) => p.body);
    const text = JSON.stringify(payload);
    const deadline = Date.now() + maxRateLimitWaitMs;
    const failed = new Set<Endpoint>();
    let lastError: Error | undefined;
    for (;;) {
      const now = Date.now();
      const next = choose(
        endpoints.filter((e) => !failed.has(e)),
        now,
      );
      if (next === undefined || ('waitUntil' in next && next.waitUntil > deadline)) {
        const error = lastError ?? endpoints.find((e) => e.limitError !== undefined)?.limitError;
        return batch.forEach((p) => p.reject(error));
      }
      if ('waitUntil' in next) {
        await new Promise((r) => setTimeout(r, next.waitUntil - now));
        continue;
      }
      const attempt = await postTo(next, payload, text);
      switch (attempt.kind) {
        case 'answered':
          next.downUntil = 0;
          next.limitStreak = 0;
          return deliver(next, batch, attempt.answers);
        case 'refused':
          return batch.forEach((p) => p.reject(attempt.error));
        case 'unreachable':
          next.downUntil = Date.now() + cooldownMs;
          failed.add(next);
          lastError = attempt.error;
          opts.failover?.onEndpointFailed?.(originOf(next.url), 'unreachable');
          break;
        case 'rateLimited': {
          opts.failover?.onEndpointFailed?.(originOf(next.url), 'rateLimited');
          next.limitStreak += 1;
          next.limitError = attempt.error;
          const backoff = Math.min(backoffBaseMs * 2 ** (next.limitStreak - 1), backoffMaxMs);
          // The endpoint's own word on when to come back is kept even past this batch's budget: other batches heed it.
          next.limitedUntil = Date.now() + Math.min(attempt.retryAfterMs ?? backoff, MAX_RETRY_AFTER_MS);
          lastError = attempt.error;
          break;
        }
      }
    }
  }

  function deliver(endpoint: Endpoint, batch: Pending[], answers: Answer[]): void {
    const byId = new Map<number, Answer>();
    for (const a of answers) byId.set(a.id, a);
    for (const p of batch) {
      const a = byId.get(p.body.id);
      if (!a) p.reject(new HttpRequestError({ body: p.body, details: 'no answer for this call in the batch', url: endpoint.url }));
      else if (a.error) p.reject(new RpcRequestError({ body: p.body, error: a.error, url: endpoint.url }));
      else p.resolve(a.result);
    }
  }

  function postTo(endpoint: Endpoint, payload: unknown, text: string): Promise<Attempt> {
    const { url } = endpoint;
    return new Promise((resolve) => {
      let settled = false;
      const settle = (a: Attempt) => {
        if (!settled) resolve(a);
        settled = true;
      };
      const req = endpoint.send(
        endpoint.target,
        {
          method: 'POST',
          agent: endpoint.agent,
          headers: { 'content-type': 'application/json', 'content-length': Buffer.byteLength(text) },
          timeout: timeoutMs,
        },
        (res: IncomingMessage) => {
          const chunks: Buffer[] = [];
          res.on('data', (c: Buffer) => chunks.push(c));
          res.on('error', (e) => settle({ kind: 'unreachable', error: new HttpRequestError({ body: payload as never, cause: e, details: e.message, url }) }));
          res.on('end', () => {
            const raw = Buffer.concat(chunks).toString('utf8');
            const status = res.statusCode ?? 500;
            if (status >= 400) {
              const error = new HttpRequestError({ body: payload as never, details: raw.slice(0, 500), status, url });
              if (status === 429) return settle({ kind: 'rateLimited', retryAfterMs: retryAfterMs(res.headers['retry-after']), error });
              if (REQUEST_FAULTS.has(status)) return settle({ kind: 'refused', error });
              return settle({ kind: 'unreachable', error });
            }
            let parsed: unknown;
            try {
              parsed = JSON.parse(raw);
            } catch {
              // A proxy's or load balancer's page, not a node's answer.
              return settle({ kind: 'unreachable', error: new HttpRequestError({ body: payload as never, details: `invalid JSON: ${raw.slice(0, 200)}`, url }) });
            }
            const answers = (Array.isArray(parsed) ? parsed : [parsed]) as Answer[];
            const limited = answers.length > 0 && answers.every((a) => a?.error !== undefined && RATE_LIMIT_CODES.has(a.error.code));
            if (limited) {
              const error = new HttpRequestError({ body: payload as never, details: `rate limited: ${answers[0]!.error!.message}`, status: 429, url });
              return settle({ kind: 'rateLimited', retryAfterMs: undefined, error });
            }
            settle({ kind: 'answered', answers });
          });
        },
      );
      req.on('timeout', () => req.destroy(new TimeoutError({ body: payload as never, url })));
      req.on('error', (e) =>
        settle({ kind: 'unreachable', error: e instanceof TimeoutError ? e : new HttpRequestError({ body: payload as never, cause: e, details: e.message, url }) }),
      );
      req.end(text);
    });
  }

  return custom(
    {
      request: ({ method, params }: { method: string; params?: unknown }) =>
        new Promise((resolve, reject) => {
          const call: Pending = { body: { jsonrpc: '2.0', id: nextId++, method, params: params ?? [] }, resolve, reject };
          if (unbatched(method)) return void post([call]);
          queue.push(call);
          if (!scheduled) {
            scheduled = true;
            setImmediate(flush);
          }
        }),
    },
    { retryCount: opts.retryCount ?? 2, retryDelay: opts.retryDelay ?? 50 },
  );
}

/** Retry-After in milliseconds: delay-seconds or an HTTP-date; undefined when absent or unreadable. */
export function retryAfterMs(header: string | string[] | undefined, now = Date.now()): number | undefined {
  const value = Array.isArray(header) ? header[0] : header;
  if (value === undefined || value.trim() === '') return undefined;
  if (/^\s*\d+\s*$/.test(value)) return Number(value) * 1000;
  const at = Date.parse(value);
  return Number.isNaN(at) ? undefined : Math.max(0, at - now);
}

/** An endpoint as metrics and logs may name it: scheme and host (providers put API keys in the path or query). */
function originOf(url: string): string {
  try {
    const u = new URL(url);
    return `${u.protocol}//${u.host}`;
  } catch {
    return '(unparsable URL)';
  }
}
