import { Agent as HttpAgent, request as httpRequest } from 'node:http';
import { Agent, request } from 'node:https';
import { readFileSync } from 'node:fs';
import { EgressRefusedError, guardedLookup, guardSocket, hostOf, isLoopbackHost, resolveAllowed, type EgressPolicy } from '../lib/egress/egress.ts';
import { parseIp } from '../lib/egress/addresses.ts';
import { parseRetryAfter } from './schedule.ts';

/**
 * One delivery attempt over HTTPS (or plain HTTP to a loopback receiver, in development only: allowLoopback),
 * and what it means: 2xx delivered; 410 the endpoint is gone (never tried
 * again); anything else a failure to retry, with its cause. Redirects are not followed (a 3xx is a failure:
 * following one would send the payload, and the next check, to a place the caller never named). The whole
 * attempt has one deadline, from the call of `send` to the response's headers: waiting for a socket,
 * connecting, TLS and the answer. The response's body is never read: once the status (and Retry-After) is
 * known the socket is closed, so a receiver that trickles its body holds nothing of ours.
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
  /** Deadline of one attempt, from the call of `send` to the response's headers (default 15 s). */
  timeoutMs?: number;
  /**
   * Sockets open at once per endpoint (host:port) and in all: a backstop behind the controller, which bounds
   * attempts the same way. An attempt past them waits for a socket, within its deadline.
   */
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
  // No keep-alive: every socket is closed once its status is read (the body never is), so none could be
  // reused. The agent is kept for its bounds on sockets open at once, and for the trusted CAs.
  const agent = new Agent({
    keepAlive: false,
    maxSockets: opts.maxSocketsPerEndpoint ?? 4,
    maxTotalSockets: opts.maxSockets ?? 64,
    ...(opts.ca !== undefined && { ca: opts.ca }),
  });
  // Plain http:// to a receiver on this machine, in development only (allowLoopback): its own agent (the same
  // bounds), and a policy that lets it reach loopback and nothing else.
  const plainAgent = new HttpAgent({ keepAlive: false, maxSockets: opts.maxSocketsPerEndpoint ?? 4, maxTotalSockets: opts.maxSockets ?? 64 });
  const plainPolicy: EgressPolicy = { ...policy, loopbackOnly: true };
  const userAgent = opts.userAgent ?? `agent-wallet-webhooks/${VERSION}`;

  async function send(attempt: Attempt): Promise<AttemptResult> {
    const url = URL.canParse(attempt.url) ? new URL(attempt.url) : undefined;
    const plain = url?.protocol === 'http:' && policy.allowLoopback === true && isLoopbackHost(url);
    if (!url || (url.protocol !== 'https:' && !plain)) {
      return { kind: 'failed', cause: 'blocked_address', message: 'only https:// callback URLs are sent to (plain http:// to loopback in development only)' };
    }
    const using = plain ? plainPolicy : policy;
    // The attempt's one deadline starts now, and the stop signal joins it: whichever comes first ends it.
    const end = new AbortController();
    const timer = setTimeout(() => end.abort(new AttemptTimeout()), timeoutMs);
    const onStop = () => end.abort(new AttemptAborted());
    if (attempt.signal?.aborted) onStop();
    else attempt.signal?.addEventListener('abort', onStop, { once: true });
    try {
      // An IP literal never reaches the lookup: it is checked here. A name is checked by the lookup, on the
      // addresses the socket then connects to.
      if (parseIp(hostOf(url))) await resolveAllowed(hostOf(url), using);
      const { statusCode, retryAfter } = await post(url, attempt, end.signal, using);
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
      if (e instanceof AttemptTimeout) return { kind: 'failed', cause: 'timeout', message: `no response within ${timeoutMs / 1000} s` };
      const cause = causeOfError(e);
      const message = e instanceof EgressRefusedError ? `${url.hostname} ${e.shortMessage}` : ((e as Error)?.message ?? String(e));
      return { kind: 'failed', cause, message: message.slice(0, 300) };
    } finally {
      clearTimeout(timer);
      attempt.signal?.removeEventListener('abort', onStop);
    }
  }

  /** POSTs the attempt and resolves with the response's status and Retry-After, or rejects with why not. */
  function post(url: URL, attempt: Attempt, end: AbortSignal, policy: EgressPolicy): Promise<{ statusCode: number; retryAfter: string | undefined }> {
    return new Promise((resolve, reject) => {
      if (end.aborted) return reject(end.reason);
      const body = Buffer.from(attempt.body, 'utf8');
      const plain = url.protocol === 'http:';
      const req = (plain ? httpRequest : request)(url, {
        method: 'POST',
        agent: plain ? plainAgent : agent,
        lookup: guardedLookup(policy),
        headers: {
          ...attempt.headers,
          'content-type': 'application/json',
          'content-length': String(body.length),
          'user-agent': userAgent,
          // Said as done: each attempt's connection is closed once the status is read (Node would otherwise
          // announce keep-alive whenever an agent bounds its sockets).
          connection: 'close',
        },
      });
      // Rejected here rather than by the request's 'error': a request still waiting in the agent for a socket
      // emits that only once a socket frees, and sockets held elsewhere may never free.
      const onEnd = () => {
        reject(end.reason);
        req.destroy(end.reason as Error);
      };
      end.addEventListener('abort', onEnd, { once: true });
      req.on('socket', (socket) => guardSocket(socket, policy));
      req.on('response', (res) => {
        end.removeEventListener('abort', onEnd);
        const retryAfter = res.headers['retry-after'];
        resolve({ statusCode: res.statusCode ?? 0, retryAfter: Array.isArray(retryAfter) ? retryAfter[0] : retryAfter });
        // The body is never read, not even drained: the socket is closed now.
        res.on('error', () => undefined);
        req.destroy();
      });
      req.on('error', (e) => {
        end.removeEventListener('abort', onEnd);
        reject(e);
      });
      req.end(body);
    });
  }

  return {
    send,
    close: () => {
      agent.destroy();
      plainAgent.destroy();
    },
  };
}
