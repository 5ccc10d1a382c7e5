import { Agent as HttpAgent, request as httpRequest, type IncomingMessage } from 'node:http';
import { Agent as HttpsAgent, request as httpsRequest } from 'node:https';
import { custom, HttpRequestError, RpcRequestError, TimeoutError, type Transport } from 'viem';

export interface BatchingTransportOptions {
  /** Whole-batch timeout. */
  timeoutMs?: number;
  /** Most calls in one JSON-RPC batch. */
  maxBatchSize?: number;
  retryCount?: number;
  retryDelay?: number;
}

interface Pending {
  body: { jsonrpc: '2.0'; id: number; method: string; params: unknown };
  resolve(value: unknown): void;
  reject(error: unknown): void;
}

/**
 * A viem transport for a chain worker under load: JSON-RPC calls made in the same tick go out as one batch
 * over a keep-alive connection pool. viem's `http` transport spends more CPU than the node itself at a few
 * hundred operations per second: one fetch (undici streams, an AbortController) per call and a TimeoutError,
 * stack trace included, built in advance for every call. Errors are viem's own (RpcRequestError,
 * HttpRequestError, TimeoutError), so revert data and error codes reach the callers exactly as with `http`.
 */
export function batchingHttp(url: string, opts: BatchingTransportOptions = {}): Transport {
  const target = new URL(url);
  const secure = target.protocol === 'https:';
  const agent = secure ? new HttpsAgent({ keepAlive: true, maxSockets: 32 }) : new HttpAgent({ keepAlive: true, maxSockets: 32 });
  const send = secure ? httpsRequest : httpRequest;
  const timeoutMs = opts.timeoutMs ?? 15_000;
  const maxBatch = opts.maxBatchSize ?? 100;
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
      post(batch);
    }
  }

  function post(batch: Pending[]): void {
    const payload = batch.length === 1 ? batch[0]!.body : batch.map((p) => p.body);
    const text = JSON.stringify(payload);
    const failAll = (e: unknown) => batch.forEach((p) => p.reject(e));
    const req = send(
      target,
      {
        method: 'POST',
        agent,
        headers: { 'content-type': 'application/json', 'content-length': Buffer.byteLength(text) },
        timeout: timeoutMs,
      },
      (res: IncomingMessage) => {
        const chunks: Buffer[] = [];
        res.on('data', (c: Buffer) => chunks.push(c));
        res.on('error', failAll);
        res.on('end', () => {
          const raw = Buffer.concat(chunks).toString('utf8');
          if ((res.statusCode ?? 500) >= 400) {
            return failAll(new HttpRequestError({ body: payload as never, details: raw.slice(0, 500), status: res.statusCode ?? 0, url }));
          }
          let parsed: unknown;
          try {
            parsed = JSON.parse(raw);
          } catch {
            return failAll(new HttpRequestError({ body: payload as never, details: `invalid JSON: ${raw.slice(0, 200)}`, url }));
          }
          const answers = Array.isArray(parsed) ? parsed : [parsed];
          const byId = new Map<number, { result?: unknown; error?: { code: number; message: string; data?: unknown } }>();
          for (const a of answers as { id: number; result?: unknown; error?: { code: number; message: string; data?: unknown } }[]) byId.set(a.id, a);
          for (const p of batch) {
            const a = byId.get(p.body.id);
            if (!a) p.reject(new HttpRequestError({ body: p.body, details: 'no answer for this call in the batch', url }));
            else if (a.error) p.reject(new RpcRequestError({ body: p.body, error: a.error, url }));
            else p.resolve(a.result);
          }
        });
      },
    );
    req.on('timeout', () => req.destroy(new TimeoutError({ body: payload as never, url })));
    req.on('error', (e) => failAll(e instanceof TimeoutError ? e : new HttpRequestError({ body: payload as never, cause: e, details: e.message, url })));
    req.end(text);
  }

  return custom(
    {
      request: ({ method, params }: { method: string; params?: unknown }) =>
        new Promise((resolve, reject) => {
          const call: Pending = { body: { jsonrpc: '2.0', id: nextId++, method, params: params ?? [] }, resolve, reject };
          if (unbatched(method)) return post([call]);
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
