import { Agent, request } from 'node:https';
import { readFileSync } from 'node:fs';
import { EgressRefusedError, guardedLookup, guardSocket, hostOf, resolveAllowed, type EgressPolicy } from './egress.ts';
import { parseIp } from './addresses.ts';
import { parseRetryAfter } from './schedule.ts';

/**
 * One delivery attempt over HTTPS, and what it means: 2xx delivered; 410 the endpoint is gone (never tried
 * again); anything else a failure to retry, with its cause. Redirects are not followed (a 3xx is a failure:
 * following one would send the payload, and the next check, to a place the caller never named), and the
 * whole attempt, connect to response headers, has one deadline.
 */

/** Why an attempt failed: a label of agentwallet_webhook_failures_total, and status.webhook.lastFailure.cause. */
export const FAILURE_CAUSES = [
  'server_error',
  'throttled',
  'client_error',
  'redirect',
  'timeout',
  'connection',
  'tls',
  'dns',
  'blocked_address',
  'no_secret',
  'secret_unavailable',
  'interrupted',
] as const;
export type FailureCause = (typeof FAILURE_CAUSES)[number];

export type AttemptResult =
  | { kind: 'delivered'; statusCode: number }
  | { kind: 'gone'; statusCode: number }
  | { kind: 'failed'; cause: FailureCause; message: string; statusCode?: number; retryAfterMs?: number }
  /** The attempt was cut short because this process stops (or lost leadership): its outcome is unknown. */
  | { kind: 'aborted' };

export interface Attempt {
  url: string;
  body: string;
  headers: Readonly<Record<string, string>>;
  signal?: AbortSignal;
}

export interface WebhookTransport {
  send(attempt: Attempt): Promise<AttemptResult>;
  close(): void;
}

export interface HttpsTransportOptions extends EgressPolicy {
  /** Deadline of one attempt (default 15 s). */
  timeoutMs?: number;
  /** Connections kept per endpoint (host:port); the controller bounds attempts per endpoint the same way. */
  maxSocketsPerEndpoint?: number;
  maxSockets?: number;
  /** Extra trusted CA certificates (PEM), e.g. a test receiver's self-signed one; default: Node's. */
  ca?: string | Buffer | undefined;
  userAgent?: string;
}

const VERSION = (() => {
  try {
    return (JSON.parse(readFileSync(new URL('../../package.json', import.meta.url), 'utf8')) as { version?: string }).version ?? '0';
  } catch {
    return '0';
  }
})();

const TLS_CODE = /^(ERR_TLS|ERR_SSL|CERT_|UNABLE_TO_|DEPTH_ZERO|SELF_SIGNED|ERR_OSSL|HOSTNAME_MISMATCH)/;

function causeOfError(e: unknown): FailureCause {
  if (e instanceof EgressRefusedError) return e.code === 'unresolvable' ? 'dns' : 'blocked_address';
  const code = (e as NodeJS.ErrnoException)?.code ?? '';
  if (code === 'ENOTFOUND' || code === 'EAI_AGAIN' || code === 'ENODATA') return 'dns';
  if (TLS_CODE.test(code)) return 'tls';
  return 'connection';
}

function causeOfStatus(status: number): FailureCause {
  if (status === 429) return 'throttled';
  if (status >= 500) return 'server_error';
  if (status >= 300 && status < 400) return 'redirect';
  return 'client_error';
}

class AttemptTimeout extends Error {}
class AttemptAborted extends Error {}

export function createHttpsTransport(opts: HttpsTransportOptions = {}): WebhookTransport {
  const timeoutMs = opts.timeoutMs ?? 15_000;
  const policy: EgressPolicy = { ...(opts.allowLoopback !== undefined && { allowLoopback: opts.allowLoopback }), ...(opts.resolver && { resolver: opts.resolver }) };
  const agent = new Agent({
    keepAlive: true,
    maxSockets: opts.maxSocketsPerEndpoint ?? 4,
    maxTotalSockets: opts.maxSockets ?? 64,
    ...(opts.ca !== undefined && { ca: opts.ca }),
  });
  const userAgent = opts.userAgent ?? `agent-wallet-webhooks/${VERSION}`;

  async function send(attempt: Attempt): Promise<AttemptResult> {
    const url = URL.canParse(attempt.url) ? new URL(attempt.url) : undefined;
    if (url?.protocol !== 'https:') return { kind: 'failed', cause: 'blocked_address', message: 'only https:// callback URLs are sent to' };
    const started = Date.now();
    try {
      // An IP literal never reaches the lookup: it is checked here. A name is checked by the lookup, on the
      // addresses the socket then connects to.
      if (parseIp(hostOf(url))) await resolveAllowed(hostOf(url), policy);
      const { statusCode, retryAfter } = await post(url, attempt, started);
      if (statusCode >= 200 && statusCode < 300) return { kind: 'delivered', statusCode };
      if (statusCode === 410) return { kind: 'gone', statusCode };
      const retryAfterMs = parseRetryAfter(retryAfter, Date.now());
      return {
        kind: 'failed',
        cause: causeOfStatus(statusCode),
        message: `HTTP ${statusCode}`,
        statusCode,
        ...(retryAfterMs !== undefined && { retryAfterMs }),
      };
    } catch (e) {
      if (e instanceof AttemptAborted) return { kind: 'aborted' };
      if (e instanceof AttemptTimeout) return { kind: 'failed', cause: 'timeout', message: `no response within ${Math.round(timeoutMs / 1000)} s` };
      const cause = causeOfError(e);
      const message = e instanceof EgressRefusedError ? `${url.hostname} ${e.shortMessage}` : ((e as Error)?.message ?? String(e));
      return { kind: 'failed', cause, message: message.slice(0, 300) };
    }
  }

  function post(url: URL, attempt: Attempt, started: number): Promise<{ statusCode: number; retryAfter: string | undefined }> {
    return new Promise((resolve, reject) => {
      if (attempt.signal?.aborted) return reject(new AttemptAborted());
      const body = Buffer.from(attempt.body, 'utf8');
      const req = request(url, {
        method: 'POST',
        agent,
        lookup: guardedLookup(policy),
        headers: {
          ...attempt.headers,
          'content-type': 'application/json',
          'content-length': String(body.length),
          'user-agent': userAgent,
        },
      });
      const timer = setTimeout(() => req.destroy(new AttemptTimeout()), Math.max(1, timeoutMs - (Date.now() - started)));
      const onAbort = () => req.destroy(new AttemptAborted());
      attempt.signal?.addEventListener('abort', onAbort, { once: true });
      const settle = () => {
        clearTimeout(timer);
        attempt.signal?.removeEventListener('abort', onAbort);
      };
      req.on('socket', (socket) => guardSocket(socket, policy));
      req.on('response', (res) => {
        settle();
        // The body is not read for meaning; drained so the connection can be reused.
        res.resume();
        res.on('error', () => undefined);
        const retryAfter = res.headers['retry-after'];
        resolve({ statusCode: res.statusCode ?? 0, retryAfter: Array.isArray(retryAfter) ? retryAfter[0] : retryAfter });
      });
      req.on('error', (e) => {
        settle();
        reject(e);
      });
      req.end(body);
    });
  }

  return { send, close: () => agent.destroy() };
}
