import type { FastifyError, FastifyReply, FastifyRequest } from 'fastify';
import { hasZodFastifySchemaValidationErrors, isResponseSerializationError } from 'fastify-type-provider-zod';
import { AgentWalletError } from '../lib/errors.ts';
import { ArchiveError } from '../archive/types.ts';
import { isChainError } from '../chain/errors.ts';
import { isStoreError } from '../store/types.ts';
import { FIELD_ERROR_CODES, REQUIRED, SHAPE_ERROR_CODE, type ErrorBody } from '../api/http/index.ts';

/**
 * Every error body is `{ error: <code>, message: <human text>, ...details }` (ErrorBodySchema in src/api/http).
 * `error` is a stable snake_case code a client can match on (except the two authentication texts fixed by spec
 * §5.6); `message` is for people; details (e.g. `field`, `request_id`, `retry_after_seconds`) use snake_case like
 * the rest of the API.
 */

/** An error the gateway answers on purpose: its status, code, message and details reach the client as-is. */
export class GatewayError extends AgentWalletError<string> {
  override readonly name = 'GatewayError';
  readonly statusCode: number;
  readonly headers: Readonly<Record<string, string>>;

  constructor(
    statusCode: number,
    code: string,
    message: string,
    opts: { details?: Record<string, unknown>; headers?: Record<string, string>; cause?: unknown } = {},
  ) {
    super(code, message, { details: opts.details, cause: opts.cause });
    this.statusCode = statusCode;
    this.headers = opts.headers ?? {};
  }

  body(): ErrorBody {
    return { error: this.code, message: this.shortMessage, ...this.details };
  }
}

/** A 400 naming the offending field, shaped exactly like a schema validation error. */
export function fieldError(code: string, field: string, message: string): GatewayError {
  return new GatewayError(400, code, `${field} ${message}`, {
    details: { field, issues: [{ field, code, message: `${field} ${message}` }] },
  });
}

interface ValidationIssue {
  /** The zod issue code (`invalid_type`, `invalid_union`, `custom`...). */
  keyword?: string;
  instancePath: string;
  message?: string;
  params?: Record<string, unknown>;
}

/** A zod issue as it appears inside an `invalid_union` issue (paths relative to the union). */
interface NestedIssue {
  code: string;
  path: PropertyKey[];
  message: string;
  expected?: string;
  [key: string]: unknown;
}

const HEADER_DISPLAY_NAMES: Readonly<Record<string, string>> = {
  'idempotency-key': 'Idempotency-Key',
  'x-payment-proof': 'X-Payment-Proof',
  'payment-signature': 'PAYMENT-SIGNATURE',
};

/** `/batch_calls/2/calldata` → `batch_calls[2].calldata`; the whole part (empty path) → `body`, `query`… */
function fieldName(instancePath: string, context: string | undefined): string {
  const segments = instancePath.split('/').filter((s) => s !== '');
  if (segments.length === 0) return context === 'querystring' ? 'query' : (context ?? 'body');
  if (context === 'headers') return HEADER_DISPLAY_NAMES[segments[0]!] ?? segments[0]!;
  return segments.reduce((acc, s) => (/^\d+$/.test(s) ? `${acc}[${s}]` : acc === '' ? s : `${acc}.${s}`), '');
}

function issueCode(issue: ValidationIssue, instancePath: string): string {
  const explicit = (issue.params?.['params'] as { code?: unknown } | undefined)?.code;
  if (typeof explicit === 'string') return explicit;
  if (issue.message === REQUIRED || issue.message?.startsWith(`${REQUIRED} `)) return 'missing_field';
  const last = instancePath.split('/').filter((s) => s !== '' && !/^\d+$/.test(s)).pop();
  return (last && FIELD_ERROR_CODES[last]) || 'invalid_request';
}

/** The issue of a field that must be absent (`z.never()` in src/api/http/execution.ts): the caller used another shape. */
const isAbsentFieldIssue = (issue: ValidationIssue): boolean =>
  issue.params?.['expected'] === 'never';

function nested(unionPath: string, issue: NestedIssue): ValidationIssue {
  const { code, path, message, ...params } = issue;
  const suffix = path.map(String).join('/');
  return {
    instancePath: suffix === '' ? unionPath : `${unionPath === '/' ? '' : unionPath}/${suffix}`,
    keyword: code,
    message,
    params,
  };
}

/**
 * A value that matched no alternative of a union (the two body shapes of POST /execute) fails with one
 * `invalid_union` issue that holds each alternative's issues. The caller meant the alternative none of whose
 * fields-that-must-be-absent are present: its issues are the answer. If every alternative has such a field,
 * the value mixes them: one `invalid_request_shape` issue (the union's message), plus the issues of the fields
 * that are present (not the "is required" ones, which would only mislead).
 */
function expandUnion(issue: ValidationIssue): ValidationIssue[] {
  const branches = issue.params?.['errors'];
  if (issue.keyword !== 'invalid_union' || !Array.isArray(branches) || branches.length === 0) return [issue];
  const alternatives = (branches as NestedIssue[][]).map((b) => b.map((i) => nested(issue.instancePath, i)));
  const meant = alternatives.find((issues) => !issues.some(isAbsentFieldIssue));
  if (meant) return meant.flatMap(expandUnion);
  const seen = new Set<string>();
  const present = alternatives
    .flat()
    .filter((i) => !isAbsentFieldIssue(i) && issueCode(i, i.instancePath) !== 'missing_field')
    .filter((i) => {
      const key = `${i.instancePath}\u0000${i.message}`;
      return seen.has(key) ? false : (seen.add(key), true);
    });
  const shape: ValidationIssue = {
    keyword: 'custom',
    instancePath: issue.instancePath,
    message: issue.message,
    params: { params: { code: SHAPE_ERROR_CODE } },
  };
  return [shape, ...present.flatMap(expandUnion)];
}

function validationBody(error: { validation: ValidationIssue[]; validationContext?: string }): ErrorBody {
  const issues = error.validation.flatMap(expandUnion).map((issue) => {
    const field = fieldName(issue.instancePath, error.validationContext);
    const message = `${field} ${issue.message ?? 'is invalid'}`;
    return { field, code: issueCode(issue, issue.instancePath), message, absent: isAbsentFieldIssue(issue) };
  });
  // A body of the wrong shape explains the other issues better than any of them, and so does a field that
  // must not be there at all (batch_calls on /simulate): report them first.
  const first =
    issues.find((i) => i.code === SHAPE_ERROR_CODE) ?? issues.find((i) => i.absent) ?? issues[0]!;
  return {
    error: first.code,
    message: first.message,
    field: first.field,
    issues: issues.map(({ field, code, message }) => ({ field, code, message })),
  };
}

/** Fastify's own client errors that we answer with a code of ours; their messages are safe to show. */
const FASTIFY_CLIENT_ERRORS: Readonly<Record<string, { status: number; code: string; message?: string }>> = {
  FST_ERR_CTP_INVALID_JSON_BODY: { status: 400, code: 'invalid_json', message: 'request body is not valid JSON' },
  FST_ERR_CTP_EMPTY_JSON_BODY: { status: 400, code: 'invalid_json', message: 'request body is empty' },
  FST_ERR_CTP_BODY_TOO_LARGE: { status: 413, code: 'payload_too_large' },
  FST_ERR_CTP_INVALID_MEDIA_TYPE: {
    status: 415,
    code: 'unsupported_media_type',
    message: 'send the body as Content-Type: application/json',
  },
  FST_ERR_MAX_PARAM_LENGTH: { status: 414, code: 'uri_too_long', message: 'a path parameter is too long' },
  FST_ERR_BAD_URL: { status: 400, code: 'invalid_request', message: 'the URL is not correctly encoded' },
  FST_ERR_CTP_INVALID_CONTENT_LENGTH: { status: 400, code: 'invalid_request', message: 'Content-Length does not match the body' },
};

/**
 * Errors raised by other modules (store, archive, locks, chain worker) that mean "retry later", not "bug":
 * answered 503 with a fixed message (theirs may name internal hosts or paths). Matched by class and code, so a
 * new code in one domain cannot be mistaken for another domain's.
 */
function operationalError(error: unknown): { code: string; message: string } | undefined {
  const STORE = { code: 'store_unavailable', message: 'the service cannot reach its state store; retry with backoff' };
  if (isStoreError(error, 'Unavailable')) return STORE;
  if (error instanceof ArchiveError && error.code === 'Unavailable') return STORE;
  if (isChainError(error, 'rpc_unavailable')) return { code: 'chain_unavailable', message: 'the chain did not answer; retry with backoff' };
  if (isChainError(error, 'closed')) return { code: 'service_unavailable', message: 'the service is shutting down; retry shortly' };
  return undefined;
}

/** The gateway's one error handler (set on the root instance; every scope inherits it). */
export function handleError(error: FastifyError | Error, request: FastifyRequest, reply: FastifyReply): FastifyReply {
  // Errors raised before the onRequest hooks ran (a 414 from the router) have no trace header yet.
  reply.header('x-trace-id', request.id);
  if (error instanceof GatewayError) {
    if (error.statusCode < 500) return reply.code(error.statusCode).headers(error.headers).send(error.body());
    request.log.warn({ code: error.code, err: error.cause ?? error }, 'request failed');
    return reply.code(error.statusCode).headers(error.headers).send({ ...error.body(), trace_id: request.id });
  }
  if (hasZodFastifySchemaValidationErrors(error)) {
    return reply.code(400).send(validationBody(error as unknown as { validation: ValidationIssue[]; validationContext?: string }));
  }
  const fastifyCode = (error as FastifyError).code;
  const known = fastifyCode !== undefined ? FASTIFY_CLIENT_ERRORS[fastifyCode] : undefined;
  if (known) return reply.code(known.status).send({ error: known.code, message: known.message ?? error.message });
  const operational = operationalError(error);
  if (operational) {
    request.log.error({ err: error }, 'operational failure');
    return reply
      .code(503)
      .header('retry-after', '1')
      .send({ error: operational.code, message: operational.message, trace_id: request.id });
  }
  // Other 4xx errors raised by Fastify itself (codes FST_*) describe the request, not our internals.
  const status = (error as FastifyError).statusCode;
  if (fastifyCode?.startsWith('FST_') && !isResponseSerializationError(error) && status !== undefined && status >= 400 && status < 500) {
    return reply.code(status).send({ error: 'invalid_request', message: error.message });
  }
  // Anything else is a bug or an outage we did not anticipate: log everything, tell the client nothing
  // beyond a trace id that support can find in the logs. Response-serialization failures land here too.
  request.log.error({ err: error }, 'unhandled error');
  return reply.code(500).send({ error: 'internal_error', message: 'internal error', trace_id: request.id });
}

export function handleNotFound(request: FastifyRequest, reply: FastifyReply): FastifyReply {
  return reply.code(404).send({ error: 'not_found', message: `no route ${request.method} ${request.url.split('?')[0]}` });
}
