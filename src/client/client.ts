import { randomUUID } from 'node:crypto';
import type { z } from 'zod';
import type {
  Balance,
  ExecuteBodySchema,
  ExecutionResult,
  Feed,
  Health,
  PaymentProofHeader,
  PolicyEvaluation,
  PolicyList,
  SimulateBodySchema,
  StatusRecord,
  WalletRecord,
} from '../api/http/index.ts';
import { MAX_STATUS_WAIT_SECONDS } from '../api/http/index.ts';
import { err, ok, type Result } from '../lib/result.ts';
import { ApiError, apiErrorOf } from './errors.ts';
import type { Journal } from './journal.ts';
import { clientIdOf, requestIdForIdempotencyKey } from './requestIds.ts';

/** What the caller sends: the request bodies as the API accepts them (aliases, defaults). */
export type ExecuteInput = z.input<typeof ExecuteBodySchema>;
export type SimulateInput = z.input<typeof SimulateBodySchema>;

export const DEFAULT_BASE_URL = 'http://127.0.0.1:8080';
export const API_KEY_ENV = 'AGENT_WALLET_API_KEY';
export const BASE_URL_ENV = 'AGENT_WALLET_BASE_URL';

export interface ClientOptions {
  /** Default: AGENT_WALLET_BASE_URL, else the local service's address. */
  baseUrl?: string | undefined;
  /** Default: AGENT_WALLET_API_KEY. Without one, protected calls get the API's own 401. */
  apiKey?: string | undefined;
  /** Attempts of a call whose outcome is unknown or that the service asks to retry (default 4). */
  attempts?: number;
  /** First retry delay; doubled each time, with full jitter (default 250 ms). */
  retryBaseMs?: number;
  /** Per attempt (default 45 s: an execute may wait 30 s for the controller's decision). */
  timeoutMs?: number;
  fetch?: typeof fetch;
  /** Where executes are recorded before they are sent and when they are answered (journal.ts). Default: none. */
  journal?: Journal | undefined;
}

export interface ExecuteOptions {
  /** Default: a fresh UUID per execute, reused by its retries, so a retry can never run it twice. */
  idempotencyKey?: string;
  paymentProof?: PaymentProofHeader;
  /** x402: the PAYMENT-SIGNATURE header's value. */
  paymentSignature?: string;
}

export interface WaitOptions {
  /** Polling interval bounds, for a service that does not wait (spec 8.1 advises 2–5 s; default 2–5 s, jittered). */
  minIntervalMs?: number;
  maxIntervalMs?: number;
  timeoutMs?: number;
  /** Called with each status seen (a progress line). */
  onStatus?: (status: StatusRecord) => void;
  /** Also stop at a state this says to (e.g. one only the caller can move on, like payment_required). */
  until?: (status: StatusRecord) => boolean;
}

const TERMINAL = new Set(['confirmed', 'reverted', 'failed']);

/**
 * The typed client of agent-wallet's HTTP API, for the CLI, the MCP server and tests. Answers are values
 * (`Result<T, ApiError>`). Reads are retried on no answer, 429 and 503 (after Retry-After, with jitter).
 * An execute is never retried blindly: each carries an Idempotency-Key, so when its outcome is unknown (no
 * answer) the retry with the same key is the lookup (spec 7) and returns the request the first attempt made.
 */
export function createClient(opts: ClientOptions = {}) {
  const baseUrl = (opts.baseUrl ?? process.env[BASE_URL_ENV] ?? DEFAULT_BASE_URL).replace(/\/+$/, '');
  const apiKey = opts.apiKey ?? process.env[API_KEY_ENV];
  const attempts = opts.attempts ?? 4;
  const retryBaseMs = opts.retryBaseMs ?? 250;
  const timeoutMs = opts.timeoutMs ?? 45_000;
  const doFetch = opts.fetch ?? fetch;

  /** One call; `seen` gets the answer's headers (what a body does not say: a replay, an applied wait). */
  async function once<T>(
    method: string,
    path: string,
    body?: unknown,
    headers: Record<string, string> = {},
    seen?: (headers: Headers) => void,
  ): Promise<Result<T, ApiError>> {
    let res: Response;
    try {
      res = await doFetch(baseUrl + path, {
        method,
        headers: {
          ...(apiKey !== undefined && { 'x-api-key': apiKey }),
          ...(body !== undefined && { 'content-type': 'application/json' }),
          ...headers,
        },
        ...(body !== undefined && { body: JSON.stringify(body) }),
        signal: AbortSignal.timeout(timeoutMs),
      });
    } catch (cause) {
      return err(new ApiError(0, 'no_answer', `no answer from ${baseUrl}: ${(cause as Error).message}`, {}, undefined, { cause }));
    }
    seen?.(res.headers);
    if (!res.ok) return err(await apiErrorOf(res));
    return ok((await res.json()) as T);
  }

  /** Retries what may be retried: no answer (only where that is safe: `unansweredSafe`), 429, 503. */
  async function withRetries<T>(call: () => Promise<Result<T, ApiError>>, unansweredSafe: boolean): Promise<Result<T, ApiError>> {
    let last: Result<T, ApiError> | undefined;
    for (let attempt = 1; attempt <= attempts; attempt++) {
      last = await call();
      if (last.ok) return last;
      const e = last.error;
      const retryable = (e.unanswered && unansweredSafe) || e.status === 429 || e.status === 503;
      if (!retryable || attempt === attempts) return last;
      const backoff = Math.random() * retryBaseMs * 2 ** (attempt - 1);
      await sleep(Math.max(backoff, (e.retryAfterSeconds ?? 0) * 1000));
    }
    return last!;
  }

  const read = <T>(path: string) => withRetries(() => once<T>('GET', path), true);

  /**
   * An executing call (POST /execute, a protocol action): recorded in the journal before it is sent and when it
   * is answered, with one Idempotency-Key for every attempt, so a retry after no answer finds the first request.
   */
  async function submit<T>(
    path: string,
    body: object,
    o: ExecuteOptions,
  ): Promise<Result<T, ApiError> & { idempotencyKey: string; requestId: string | undefined; replayed: boolean }> {
    const idempotencyKey = o.idempotencyKey ?? randomUUID();
    const derivedId = requestIdForIdempotencyKey(apiKey, idempotencyKey);
    const headers: Record<string, string> = {
      'idempotency-key': idempotencyKey,
      ...(o.paymentProof && { 'x-payment-proof': JSON.stringify(o.paymentProof) }),
      ...(o.paymentSignature && { 'payment-signature': o.paymentSignature }),
    };
    opts.journal?.recordSent({
      base_url: baseUrl,
      client_id: clientIdOf(apiKey) ?? null,
      idempotency_key: idempotencyKey,
      request_id: derivedId ?? null,
      path,
      body: body as Record<string, unknown>,
    });
    let replayed = false;
    const r = await withRetries(() => once<T>('POST', path, body, headers, (h) => (replayed = h.get('idempotent-replayed') === 'true')), true);
    const answeredId = r.ok ? (r.value as { request_id?: string }).request_id : (r.error.body.request_id as string | undefined);
    if (!r.ok && r.error.unanswered) {
      // Nothing more is known than before: the `sent` line stands for it.
    } else {
      opts.journal?.recordAnswer({
        idempotency_key: idempotencyKey,
        request_id: answeredId ?? derivedId ?? null,
        outcome: r.ok ? String((r.value as { status?: string }).status ?? 'ok') : r.error.code,
        http_status: r.ok ? 200 : r.error.status,
      });
    }
    return { ...r, idempotencyKey, requestId: answeredId ?? derivedId, replayed };
  }
  const query = (q: Record<string, string | undefined>) =>
    new URLSearchParams(Object.entries(q).filter((e): e is [string, string] => e[1] !== undefined)).toString();

  /**
   * One GET /status/:id that waits (up to `waitSeconds`, at most 30) for the status to be other than
   * `knownStatus`, or to be terminal (docs/api.md). `waited`: the service applied the wait (Preference-Applied).
   */
  async function statusChange(requestId: string, knownStatus: string, waitSeconds: number): Promise<Result<{ record: StatusRecord; waited: boolean }, ApiError>> {
    const wait = Math.min(MAX_STATUS_WAIT_SECONDS, Math.max(0, Math.ceil(waitSeconds)));
    const path = `/status/${encodeURIComponent(requestId)}?${query({ wait: String(wait), known_status: knownStatus })}`;
    let waited = false;
    const r = await withRetries(() => once<StatusRecord>('GET', path, undefined, {}, (h) => (waited = h.has('preference-applied'))), true);
    return r.ok ? ok({ record: r.value, waited }) : r;
  }

  return {
    baseUrl,
    health: () => read<Health>('/health'),
    wallet: (agentId: string, chain?: string) => read<WalletRecord>(`/wallet?${query({ agent_id: agentId, chain })}`),
    balance: (agentId: string, chain?: string) => read<Balance>(`/wallet/balance?${query({ agent_id: agentId, chain })}`),
    status: (requestId: string) => read<StatusRecord>(`/status/${encodeURIComponent(requestId)}`),
    /**
     * POST /status/:id/cancel: the record `failed` with failure code `cancelled` (200), or as it is while the
     * controller has yet to end it (202: nothing will be signed). Too late (signed, or finished): an ApiError 409
     * `not_cancellable` whose body says why. Asking again answers the same, so it is retried like a read.
     */
    cancel: (requestId: string) => withRetries(() => once<StatusRecord>('POST', `/status/${encodeURIComponent(requestId)}/cancel`), true),
    /** `limit` goes as given: the API validates it (1 to 100) and says so in its 400. */
    feed: (limit?: number | string) => read<Feed>(`/feed/recent${limit === undefined ? '' : `?${query({ limit: String(limit) })}`}`),
    /** GET /policy: the policies that govern an agent of this key, in the order they are judged. */
    policy: (agentId: string) => read<PolicyList>(`/policy?${query({ agent_id: agentId })}`),
    /** POST /policy/evaluate: a dry run of an execute body against the agent's policies; nothing is created. */
    evaluatePolicy: (body: ExecuteInput) => withRetries(() => once<PolicyEvaluation>('POST', '/policy/evaluate', body), true),
    /** Simulation is a read: nothing is stored, so it is retried like one. */
    simulate: (body: SimulateInput) => withRetries(() => once<ExecutionResult>('POST', '/simulate', body), true),
    /**
     * Execute. A 402 is an `ApiError` whose `payment` is the quote: pay, then call again with the same body and
     * `paymentProof` (or `paymentSignature`). The Idempotency-Key makes every retry of this call safe.
     */
    execute: (body: ExecuteInput, o: ExecuteOptions = {}) => submit<ExecutionResult>('/execute', body, o),
    /** An executing call at another path (a protocol action: `/protocols/<slug>/<action>`), as `execute` is made. */
    executeAt: <T = ExecutionResult>(path: string, body: object, o: ExecuteOptions = {}) => submit<T>(path, body, o),
    /** The protocol families (`/protocols/<slug>/...`, docs/protocols/): reads, action simulations, and actions. */
    protocols: {
      /** GET `/protocols/<slug>/<path>`: a read, retried like every read. */
      read: <T = Record<string, unknown>>(slug: string, path: string, q: Record<string, string | undefined> = {}) => {
        const qs = query(q);
        return read<T>(`/protocols/${slug}/${path}${qs ? `?${qs}` : ''}`);
      },
      /** POST `/protocols/<slug>/<path>` of a read served as POST (a quote): nothing is executed, so retried like a read. */
      compute: <T = Record<string, unknown>>(slug: string, path: string, body: object) =>
        withRetries(() => once<T>('POST', `/protocols/${slug}/${path}`, body), true),
      /** POST `.../<action>/simulate`: nothing is broadcast; the answer has the calls and their effects. */
      simulate: <T = Record<string, unknown>>(slug: string, action: string, body: object) =>
        withRetries(() => once<T>('POST', `/protocols/${slug}/${action}/simulate`, body), true),
      /** POST `.../<action>`: executed as `execute` is (journal, Idempotency-Key, 402). */
      execute: (slug: string, action: string, body: object, o: ExecuteOptions = {}) => submit<ExecutionResult>(`/protocols/${slug}/${action}`, body, o),
    },
    /** The API client's id (the middle of its key `aw_<id>_<secret>`): what a payer's signature of a proof names. */
    clientId: clientIdOf(apiKey),
    /** The request id an execute with this Idempotency-Key has (or would have): known before any answer. */
    requestIdFor: (idempotencyKey: string) => requestIdForIdempotencyKey(apiKey, idempotencyKey),
    statusChange,
    /**
     * Follows a request until it is settled (a terminal state, and for an order a protocol's keeper settles at its
     * next price, that order's outcome: status.order no longer pending), or `until`, or `timeoutMs`: its record at once, then each change as
     * the service sees it, by waiting GETs (long polls of at most 30 s, never past the deadline). A service that does
     * not wait (one from before waits) is polled 2–5 s apart, jittered (spec 8.1).
     */
    async waitForTerminal(requestId: string, w: WaitOptions = {}): Promise<Result<StatusRecord, ApiError>> {
      const min = w.minIntervalMs ?? 2_000;
      const max = Math.max(min, w.maxIntervalMs ?? 5_000);
      const deadline = Date.now() + (w.timeoutMs ?? 10 * 60_000);
      let known: StatusRecord | undefined;
      for (;;) {
        const r = known === undefined
          ? await read<StatusRecord>(`/status/${encodeURIComponent(requestId)}`)
          : await statusChange(requestId, known.status, (deadline - Date.now()) / 1000);
        if (!r.ok) return r;
        const record = 'record' in r.value ? r.value.record : r.value;
        w.onStatus?.(record);
        const orderPending = record.order?.state === 'pending' && record.order.settles === 'next_price';
        if ((TERMINAL.has(record.status) && !orderPending) || w.until?.(record)) return ok(record);
        const left = deadline - Date.now();
        if (left <= 0) {
          const still = orderPending ? `${record.status}, its order still pending,` : record.status;
          return err(new ApiError(0, 'wait_timeout', `request ${requestId} still ${still} after the wait`, record as unknown as Record<string, unknown>));
        }
        // Never past the deadline: a caller with a timeout of its own (an MCP host) gets its answer within it.
        const unchangedAtOnce = 'waited' in r.value && !r.value.waited && record.status === known?.status;
        if (unchangedAtOnce) await sleep(Math.min(left, min + Math.random() * (max - min)));
        known = record;
      }
    },
  };
}
export type AgentWalletClient = ReturnType<typeof createClient>;

const sleep = (ms: number) => new Promise((resolve) => setTimeout(resolve, ms));
